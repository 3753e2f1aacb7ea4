package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/enrol"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/netboot"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store"
)

// TestADiscoveryWindowEnrolsByTheStoresRules: a discovery window's
// wiring enrols a kept machine by the rules of its stores, registers it
// there, records "enrolled by rule" on the timeline, and says when none
// takes a machine.
func TestADiscoveryWindowEnrolsByTheStoresRules(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	stores, err := store.Open(ctx, dir, store.Options{SecretsDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	rule := enrol.Rule{Name: "qemu", Priority: 1, Mode: enrol.ModeInstall, Hostname: "{site}-{n:02}", Match: enrol.Match{Vendor: "QEMU"}}
	if err := rule.Check(registry.Site{Domain: "lab.example"}); err != nil {
		t.Fatal(err)
	}
	if _, err := stores.Rules().Update(ctx, func(s enrol.State) (enrol.State, error) { return s.Add(rule, false) }); err != nil {
		t.Fatal(err)
	}
	cfg, b, err := withBackend(ctx, stores, pxe.Config{StateDir: dir, Discover: true}, registry.Site{Domain: "lab.example"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if cfg.Enrol == nil {
		t.Fatal("a discovery window has no enrolment")
	}
	rec := discovery.Record{ID: "52:54:00:00:00:01", Report: discovery.Report{NICs: []discovery.NIC{{MAC: "52:54:00:00:00:01"}}, DMI: discovery.DMI{Vendor: "QEMU"},
		Disks: []discovery.Disk{{Name: "vda", Serial: "VD-1", SizeBytes: 32e9}}}}
	if got := cfg.Enrol(ctx, rec); got != (netboot.Enrolment{Outcome: netboot.EnrolEnrolled, Rule: "qemu", Node: "lab-01", Install: true}) {
		t.Errorf("enrolment = %+v, want lab-01 by rule qemu, install", got)
	}
	if r, err := stores.Registrations().Get(ctx, "lab-01"); err != nil || r.BootDisk.Value != "VD-1" {
		t.Errorf("registration lab-01 = %+v, %v", r, err)
	}
	other := rec
	other.ID, other.NICs, other.DMI.Vendor = "52:54:00:00:00:02", []discovery.NIC{{MAC: "52:54:00:00:00:02"}}, "Dell Inc."
	if got := cfg.Enrol(ctx, other); got.Outcome != netboot.EnrolNoRule || got.Node != "" || got.Reason == "" {
		t.Errorf("a machine no rule takes: %+v", got)
	}
	evs, err := stores.Events().Read(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Event.Kind != events.Enrolled || evs[0].Event.Detail != "enrolled by rule qemu (install)" || evs[1].Event.Kind != events.Unenrolled {
		t.Errorf("events %+v, want enrolled then unenrolled", evs)
	}
}

// TestADiscoveryWindowPreviewsAsRuleTestDoes: a discovery window's
// preview (what its status page shows of each inbox machine) is the
// decision `rule test` makes ([enrol.PreviewInbox]): the rule and name
// of each machine of the inbox, or the same reason, and it stores
// nothing.
func TestADiscoveryWindowPreviewsAsRuleTestDoes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	stores, err := store.Open(ctx, dir, store.Options{SecretsDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	site := registry.Site{Domain: "lab.example"}
	rule := enrol.Rule{Name: "qemu", Priority: 1, Mode: enrol.ModeInstall, Hostname: "{site}-{n:02}", Match: enrol.Match{Vendor: "QEMU"}}
	if _, err := stores.Rules().Update(ctx, func(s enrol.State) (enrol.State, error) { return s.Add(rule, false) }); err != nil {
		t.Fatal(err)
	}
	cfg, b, err := withBackend(ctx, stores, pxe.Config{StateDir: dir, Discover: true}, site, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if cfg.EnrolPreview == nil {
		t.Fatal("a discovery window has no preview")
	}
	now := time.Now()
	for i, vendor := range []string{"QEMU", "Dell Inc.", "QEMU"} {
		mac := fmt.Sprintf("52:54:00:00:00:%02d", i)
		rep := discovery.Report{NICs: []discovery.NIC{{MAC: mac}}, DMI: discovery.DMI{Vendor: vendor}, Disks: []discovery.Disk{{Name: "vda", Serial: "VD-" + mac, SizeBytes: 32e9}}}
		if _, err := cfg.Inbox.Put(ctx, rep, now); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := cfg.Inbox.List(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	got, err := cfg.EnrolPreview(ctx, recs)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := enrol.PreviewInbox(ctx, stores.Rules(), stores.Registrations(), cfg.Inbox, site, now)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]netboot.Enrolment{}
	for _, d := range ds {
		want[d.Machine] = enrolment(d, d.Err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("preview (-rule test +window):\n%s", diff)
	}
	if st, err := stores.Rules().Read(ctx); err != nil || len(st.Held) != 0 {
		t.Errorf("the preview stored holds %+v (%v)", st.Held, err)
	}
}
