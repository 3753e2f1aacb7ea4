package tofu

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	tfjson "github.com/hashicorp/terraform-json"
)

// ovhDestructive is the anchor's list (A.9).
var ovhDestructive = DestructiveAttrs(map[string][]string{
	"ovh_dedicated_server": {"os", "boot_id", "customizations"},
})

func rc(addr, typ string, actions tfjson.Actions, before, after map[string]any) *tfjson.ResourceChange {
	return &tfjson.ResourceChange{
		Address: addr, Mode: tfjson.ManagedResourceMode, Type: typ,
		Change: &tfjson.Change{Actions: actions, Before: before, After: after},
	}
}

var (
	noop    = tfjson.Actions{tfjson.ActionNoop}
	create  = tfjson.Actions{tfjson.ActionCreate}
	upd     = tfjson.Actions{tfjson.ActionUpdate}
	del     = tfjson.Actions{tfjson.ActionDelete}
	replace = tfjson.Actions{tfjson.ActionDelete, tfjson.ActionCreate}
)

const srv = "ovh_dedicated_server.prod_control_existing_0"

func ovhServer(kv ...any) map[string]any {
	m := map[string]any{
		"service_name": "ns1234567.ip-192-0-2-1.net", "display_name": "prod-control-001",
		"os": "debian12_64", "boot_id": float64(1), "customizations": map[string]any{"hostname": "a"},
	}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// TestClassifyAnchorCases reproduces plasmactl-platform's plan_test.go
// (anchor A.13) and the A.9 rules.
func TestClassifyAnchorCases(t *testing.T) {
	tests := map[string]struct {
		changes []*tfjson.ResourceChange
		destr   DestructiveFunc
		want    Summary
	}{
		"NoOp: a no-op is ignored": {
			changes: []*tfjson.ResourceChange{rc(srv, "ovh_dedicated_server", noop, ovhServer(), ovhServer())},
			destr:   ovhDestructive,
			want:    Summary{},
		},
		"DisplayNameOnlyUpdate_NotDestructive: a display_name change is a plain update": {
			changes: []*tfjson.ResourceChange{rc(srv, "ovh_dedicated_server", upd,
				ovhServer(), ovhServer("display_name", "renamed"))},
			destr: ovhDestructive,
			want: Summary{Updates: []Change{{Address: srv, Type: "ovh_dedicated_server",
				ChangedAttrs: []string{"display_name"}}}},
		},
		"OSUpdate_IsDestructive: an os change is destructive with ChangedAttrs [os]": {
			changes: []*tfjson.ResourceChange{rc(srv, "ovh_dedicated_server", upd,
				ovhServer(), ovhServer("os", "ubuntu2404_64"))},
			destr: ovhDestructive,
			want: Summary{DestructiveUpdates: []Change{{Address: srv, Type: "ovh_dedicated_server",
				ChangedAttrs: []string{"os"}, DestructiveAttrs: []string{"os"}}}},
		},
		"CustomizationsUpdate_IsDestructive: a nested customizations change is destructive": {
			changes: []*tfjson.ResourceChange{rc(srv, "ovh_dedicated_server", upd,
				ovhServer(), ovhServer("customizations", map[string]any{"hostname": "b"}))},
			destr: ovhDestructive,
			want: Summary{DestructiveUpdates: []Change{{Address: srv, Type: "ovh_dedicated_server",
				ChangedAttrs: []string{"customizations"}, DestructiveAttrs: []string{"customizations"}}}},
		},
		"BootIDUpdate_IsDestructive: a boot_id change is destructive": {
			changes: []*tfjson.ResourceChange{rc(srv, "ovh_dedicated_server", upd,
				ovhServer(), ovhServer("boot_id", float64(2)))},
			destr: ovhDestructive,
			want: Summary{DestructiveUpdates: []Change{{Address: srv, Type: "ovh_dedicated_server",
				ChangedAttrs: []string{"boot_id"}, DestructiveAttrs: []string{"boot_id"}}}},
		},
		"a rename together with an os change is destructive and lists both changes": {
			changes: []*tfjson.ResourceChange{rc(srv, "ovh_dedicated_server", upd,
				ovhServer(), ovhServer("os", "x", "display_name", "y"))},
			destr: ovhDestructive,
			want: Summary{DestructiveUpdates: []Change{{Address: srv, Type: "ovh_dedicated_server",
				ChangedAttrs: []string{"display_name", "os"}, DestructiveAttrs: []string{"os"}}}},
		},
		"Delete: a delete is counted once, not also as a replacement": {
			changes: []*tfjson.ResourceChange{rc(srv, "ovh_dedicated_server", del, ovhServer(), nil)},
			destr:   ovhDestructive,
			want:    Summary{Deletes: []Change{{Address: srv, Type: "ovh_dedicated_server"}}},
		},
		"Replace: delete-then-create is a replacement only": {
			changes: []*tfjson.ResourceChange{rc(srv, "ovh_dedicated_server", replace,
				ovhServer(), ovhServer("service_name", "ns1.ip-192-0-2-2.net"))},
			destr: ovhDestructive,
			want: Summary{Replacements: []Change{{Address: srv, Type: "ovh_dedicated_server",
				ChangedAttrs: []string{"service_name"}}}},
		},
		"create-then-delete is a replacement too": {
			changes: []*tfjson.ResourceChange{rc("local_file.a", "local_file",
				tfjson.Actions{tfjson.ActionCreate, tfjson.ActionDelete},
				map[string]any{"content": "a"}, map[string]any{"content": "b"})},
			want: Summary{Replacements: []Change{{Address: "local_file.a", Type: "local_file",
				ChangedAttrs: []string{"content"}}}},
		},
		"NonOVHResource_UpdateNotDestructive: an os change on another type is a plain update": {
			changes: []*tfjson.ResourceChange{rc("scaleway_baremetal_server.a", "scaleway_baremetal_server", upd,
				map[string]any{"os": "a"}, map[string]any{"os": "b"})},
			destr: ovhDestructive,
			want: Summary{Updates: []Change{{Address: "scaleway_baremetal_server.a", Type: "scaleway_baremetal_server",
				ChangedAttrs: []string{"os"}}}},
		},
		"a create is a create": {
			changes: []*tfjson.ResourceChange{rc("hcloud_server.a", "hcloud_server", create, nil, map[string]any{"name": "a"})},
			want:    Summary{Creates: []Change{{Address: "hcloud_server.a", Type: "hcloud_server"}}},
		},
		"no destructive function means no destructive update": {
			changes: []*tfjson.ResourceChange{rc(srv, "ovh_dedicated_server", upd, ovhServer(), ovhServer("os", "x"))},
			want: Summary{Updates: []Change{{Address: srv, Type: "ovh_dedicated_server",
				ChangedAttrs: []string{"os"}}}},
		},
		"an import with no change is listed as an import only": {
			changes: []*tfjson.ResourceChange{func() *tfjson.ResourceChange {
				c := rc(srv, "ovh_dedicated_server", noop, ovhServer(), ovhServer())
				c.Change.Importing = &tfjson.Importing{ID: "ns1234567.ip-192-0-2-1.net"}
				return c
			}()},
			destr: ovhDestructive,
			want: Summary{Imports: []Change{{Address: srv, Type: "ovh_dedicated_server",
				ImportID: "ns1234567.ip-192-0-2-1.net"}}},
		},
		"an import that updates is an import and an update": {
			changes: []*tfjson.ResourceChange{func() *tfjson.ResourceChange {
				c := rc(srv, "ovh_dedicated_server", upd, ovhServer(), ovhServer("os", "x"))
				c.Change.Importing = &tfjson.Importing{ID: "ns1"}
				return c
			}()},
			destr: ovhDestructive,
			want: Summary{
				Imports: []Change{{Address: srv, Type: "ovh_dedicated_server", ImportID: "ns1"}},
				DestructiveUpdates: []Change{{Address: srv, Type: "ovh_dedicated_server", ImportID: "ns1",
					ChangedAttrs: []string{"os"}, DestructiveAttrs: []string{"os"}}},
			},
		},
		"an attribute becoming unknown counts as changed": {
			changes: []*tfjson.ResourceChange{func() *tfjson.ResourceChange {
				c := rc("hcloud_server.a", "hcloud_server", upd,
					map[string]any{"name": "a", "ipv4_address": "192.0.2.1", "labels": map[string]any{}},
					map[string]any{"name": "a", "labels": map[string]any{}})
				c.Change.AfterUnknown = map[string]any{"ipv4_address": true, "labels": map[string]any{"x": false}}
				return c
			}()},
			want: Summary{Updates: []Change{{Address: "hcloud_server.a", Type: "hcloud_server",
				ChangedAttrs: []string{"ipv4_address"}}}},
		},
		"a null attribute and a missing one are the same": {
			changes: []*tfjson.ResourceChange{rc("hcloud_server.a", "hcloud_server", upd,
				map[string]any{"name": "a", "note": nil}, map[string]any{"name": "b"})},
			want: Summary{Updates: []Change{{Address: "hcloud_server.a", Type: "hcloud_server",
				ChangedAttrs: []string{"name"}}}},
		},
		"data source reads are ignored": {
			changes: []*tfjson.ResourceChange{{Address: "data.ovh_me.account", Mode: tfjson.DataResourceMode,
				Type: "ovh_me", Change: &tfjson.Change{Actions: tfjson.Actions{tfjson.ActionRead}}}},
			want: Summary{},
		},
		"a forget is neither a delete nor ignored": {
			changes: []*tfjson.ResourceChange{rc("hcloud_server.a", "hcloud_server", tfjson.Actions{tfjson.ActionForget}, map[string]any{}, nil)},
			want:    Summary{Forgets: []Change{{Address: "hcloud_server.a", Type: "hcloud_server"}}},
		},
		"an unknown action set is treated as a replacement": {
			changes: []*tfjson.ResourceChange{rc("hcloud_server.a", "hcloud_server", tfjson.Actions{"explode"}, nil, nil)},
			want:    Summary{Replacements: []Change{{Address: "hcloud_server.a", Type: "hcloud_server"}}},
		},
		"changes without a change body are skipped": {
			changes: []*tfjson.ResourceChange{nil, {Address: "x.y", Mode: tfjson.ManagedResourceMode}},
			want:    Summary{},
		},
		"several changes keep the plan's order in each class": {
			changes: []*tfjson.ResourceChange{
				rc("hcloud_server.b", "hcloud_server", create, nil, map[string]any{}),
				rc("hcloud_server.a", "hcloud_server", create, nil, map[string]any{}),
				rc("hcloud_server.c", "hcloud_server", del, map[string]any{}, nil),
			},
			want: Summary{
				Creates: []Change{{Address: "hcloud_server.b", Type: "hcloud_server"}, {Address: "hcloud_server.a", Type: "hcloud_server"}},
				Deletes: []Change{{Address: "hcloud_server.c", Type: "hcloud_server"}},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Classify(&tfjson.Plan{ResourceChanges: tc.changes}, tc.destr)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Classify mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClassifyNilPlanIsEmpty(t *testing.T) {
	if s := Classify(nil, nil); !s.Empty() {
		t.Errorf("Classify(nil) = %+v, want empty", s)
	}
}

func TestDestructiveAttrsMatchesNamesAndPrefixes(t *testing.T) {
	tests := map[string]struct {
		typ, attr string
		want      bool
	}{
		"the name itself":                               {"ovh_dedicated_server", "os", true},
		"a dotted path under the name":                  {"ovh_dedicated_server", "customizations.hostname", true},
		"a name that only starts with the same letters": {"ovh_dedicated_server", "os_version", false},
		"another attribute":                             {"ovh_dedicated_server", "display_name", false},
		"another resource type":                         {"ovh_vrack", "os", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := ovhDestructive(tc.typ, tc.attr, nil); got != tc.want {
				t.Errorf("destructive(%q, %q) = %v, want %v", tc.typ, tc.attr, got, tc.want)
			}
		})
	}
}

func TestSummaryString(t *testing.T) {
	s := Summary{
		Imports: make([]Change, 1), Creates: make([]Change, 2), Updates: make([]Change, 1),
		DestructiveUpdates: make([]Change, 1), Deletes: make([]Change, 3),
	}
	want := "1 to import, 2 to create, 2 to update (1 destructive), 0 to replace, 3 to delete"
	if got := s.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if s.Empty() {
		t.Error("Empty() = true for a plan with changes")
	}
	if !(Summary{Imports: make([]Change, 2)}).Empty() {
		t.Error("Empty() = false for an import-only plan")
	}
}

// FuzzClassify feeds plan JSON, as tofu show -json prints it, through
// Classify: it must not panic, and each managed change other than a no-op
// or read must land in exactly one class.
func FuzzClassify(f *testing.F) {
	f.Add([]byte(`{"format_version":"1.2","resource_changes":[{"address":"a.b","mode":"managed","type":"a","change":{"actions":["update"],"before":{"os":"x"},"after":{"os":"y"}}}]}`))
	f.Add([]byte(`{"format_version":"1.2","resource_changes":[{"address":"a.b","mode":"managed","type":"a","change":{"actions":["delete","create"],"before":{"x":[1,{"y":null}]},"after":{"x":2},"after_unknown":{"x":[true]}}}]}`))
	f.Add([]byte(`{"format_version":"1.2","resource_changes":[{"address":"a.b","mode":"managed","type":"ovh_dedicated_server","change":{"actions":["no-op"],"before":{},"after":{},"importing":{"id":"ns1"}}}]}`))
	f.Add([]byte(`{"format_version":"1.2","resource_changes":[{"change":{"actions":["create","delete"],"before":"str","after":5}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var plan tfjson.Plan
		if err := json.Unmarshal(data, &plan); err != nil {
			return
		}
		s := Classify(&plan, ovhDestructive)
		want := 0
		for _, c := range plan.ResourceChanges {
			if c == nil || c.Change == nil || c.Mode == tfjson.DataResourceMode {
				continue
			}
			a := c.Change.Actions
			if len(a) == 0 || a.NoOp() || a.Read() {
				continue
			}
			want++
		}
		got := len(s.Creates) + len(s.Updates) + len(s.DestructiveUpdates) + len(s.Replacements) + len(s.Deletes) + len(s.Forgets)
		if got != want {
			t.Errorf("classified %d changes, want %d: %+v", got, want, s)
		}
		for _, c := range s.DestructiveUpdates {
			if len(c.DestructiveAttrs) == 0 {
				t.Errorf("destructive update %s names no attribute", c.Address)
			}
		}
	})
}

func TestDestructiveRulesConditions(t *testing.T) {
	d := DestructiveRules(map[string][]DestructiveRule{"r": {
		{Attrs: []string{"os"}, When: AfterSet("os")},
		{Attrs: []string{"keys"}, When: AfterTrue("reinstall")},
		{Attrs: []string{"storage"}},
	}})
	tests := map[string]struct {
		attr  string
		after map[string]any
		want  bool
	}{
		"an attribute set after the change":         {"os", map[string]any{"os": "x"}, true},
		"an attribute emptied by the change":        {"os", map[string]any{"os": ""}, false},
		"an attribute null after the change":        {"os", map[string]any{"os": nil}, false},
		"a guarded attribute with its switch on":    {"keys", map[string]any{"reinstall": true}, true},
		"a guarded attribute with its switch off":   {"keys", map[string]any{"reinstall": false}, false},
		"a guarded attribute with no values at all": {"keys", nil, false},
		"an unconditional attribute":                {"storage", nil, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := d("r", tc.attr, tc.after); got != tc.want {
				t.Errorf("destructive(%q, %v) = %v, want %v", tc.attr, tc.after, got, tc.want)
			}
		})
	}
}
