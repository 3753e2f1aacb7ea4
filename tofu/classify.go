package tofu

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	tfjson "github.com/hashicorp/terraform-json"
)

// DestructiveFunc reports whether changing attr, a top-level attribute
// name, of a resource of type resourceType reinstalls or wipes what it
// manages (an OVH server's os); after are the resource's planned values
// after the change, for a rule that holds only under a setting
// (Scaleway's reinstall_on_config_changes). Providers supply one; nil
// means no update is destructive.
type DestructiveFunc func(resourceType, attr string, after map[string]any) bool

// DestructiveAttrs returns a [DestructiveFunc] from a list of attribute
// names per resource type: a changed attribute is destructive when it
// equals a listed name or starts with the name followed by '.', whatever
// the values. The anchor's OVH list is
// DestructiveAttrs(map[string][]string{"ovh_dedicated_server": {"os",
// "boot_id", "customizations"}}).
func DestructiveAttrs(byType map[string][]string) DestructiveFunc {
	rules := make(map[string][]DestructiveRule, len(byType))
	for typ, attrs := range byType {
		rules[typ] = []DestructiveRule{{Attrs: attrs}}
	}
	return DestructiveRules(rules)
}

// DestructiveRule names attributes whose change is destructive, when
// When holds of the planned values after the change (always when When is
// nil).
type DestructiveRule struct {
	// Attrs are the attribute names; a changed attribute matches a name
	// it equals or that it starts with followed by '.'.
	Attrs []string
	// When reports, from the values after the change, whether a change
	// of Attrs is destructive; nil means always.
	When func(after map[string]any) bool
}

// DestructiveRules returns a [DestructiveFunc] from rules per resource
// type: a changed attribute is destructive when a rule of its type names
// it and that rule's When holds.
func DestructiveRules(byType map[string][]DestructiveRule) DestructiveFunc {
	return func(resourceType, attr string, after map[string]any) bool {
		for _, r := range byType[resourceType] {
			for _, p := range r.Attrs {
				if (attr == p || strings.HasPrefix(attr, p+".")) && (r.When == nil || r.When(after)) {
					return true
				}
			}
		}
		return false
	}
}

// AfterTrue returns a DestructiveRule.When that holds when the boolean
// attribute attr is true after the change.
func AfterTrue(attr string) func(after map[string]any) bool {
	return func(after map[string]any) bool { b, _ := after[attr].(bool); return b }
}

// AfterSet returns a DestructiveRule.When that holds when attr is set
// after the change: present, not null and not an empty string.
func AfterSet(attr string) func(after map[string]any) bool {
	return func(after map[string]any) bool {
		v, ok := after[attr]
		if !ok || v == nil {
			return false
		}
		s, isString := v.(string)
		return !isString || s != ""
	}
}

// Change is one resource change of a classified plan.
type Change struct {
	// Address is the resource instance address, like
	// `hcloud_server.web["a"]`.
	Address string
	// Type is the resource type.
	Type string
	// ChangedAttrs are the top-level attributes whose value differs
	// between before and after (or becomes unknown), sorted; for updates
	// and replacements only.
	ChangedAttrs []string
	// DestructiveAttrs are the ChangedAttrs the [DestructiveFunc] called
	// destructive; for destructive updates only.
	DestructiveAttrs []string
	// ImportID is the id being imported, when the change adopts an
	// existing object.
	ImportID string
}

// Summary is a plan classified by [Classify]. Each managed resource change
// other than a no-op is in exactly one of Creates, Updates,
// DestructiveUpdates, Replacements, Deletes and Forgets; Imports lists,
// in addition, every change that imports an object, a no-op included.
// Each list keeps the plan's order.
type Summary struct {
	// Creates are new objects.
	Creates []Change
	// Updates are in-place updates that destroy nothing.
	Updates []Change
	// DestructiveUpdates are in-place updates of an attribute the
	// provider calls destructive.
	DestructiveUpdates []Change
	// Replacements are destroy-and-create, in either order.
	Replacements []Change
	// Deletes are objects destroyed.
	Deletes []Change
	// Forgets are objects removed from state but not destroyed.
	Forgets []Change
	// Imports are objects adopted from outside by import blocks.
	Imports []Change
}

// Empty reports whether the plan changes nothing (imports of objects that
// need no change aside).
func (s Summary) Empty() bool {
	return len(s.Creates)+len(s.Updates)+len(s.DestructiveUpdates)+len(s.Replacements)+len(s.Deletes)+len(s.Forgets) == 0
}

// String counts each kind, like "1 to import, 2 to create, 1 to update
// (0 destructive), 0 to replace, 0 to delete".
func (s Summary) String() string {
	out := fmt.Sprintf("%d to import, %d to create, %d to update (%d destructive), %d to replace, %d to delete",
		len(s.Imports), len(s.Creates), len(s.Updates)+len(s.DestructiveUpdates), len(s.DestructiveUpdates), len(s.Replacements), len(s.Deletes))
	if len(s.Forgets) > 0 {
		out += fmt.Sprintf(", %d to forget", len(s.Forgets))
	}
	return out
}

// Classify sorts the managed resource changes of plan (data sources are
// ignored) as the anchor does: a no-op is ignored; a create is a create;
// a delete is a delete; a replacement (delete then create, or create then
// delete) is a replacement only, never also a create or a delete; an
// update is destructive when destructive reports one of its changed
// top-level attributes, else an in-place update. An action set it does
// not know counts as a replacement, the most cautious class. A nil plan
// is empty.
func Classify(plan *tfjson.Plan, destructive DestructiveFunc) Summary {
	var s Summary
	if plan == nil {
		return s
	}
	for _, rc := range plan.ResourceChanges {
		if rc == nil || rc.Change == nil || rc.Mode == tfjson.DataResourceMode {
			continue
		}
		a := rc.Change.Actions
		c := Change{Address: rc.Address, Type: rc.Type}
		if rc.Change.Importing != nil {
			c.ImportID = rc.Change.Importing.ID
			s.Imports = append(s.Imports, c)
		}
		switch {
		case a.NoOp() || a.Read() || len(a) == 0:
		case a.Create():
			s.Creates = append(s.Creates, c)
		case a.Replace():
			c.ChangedAttrs = changedAttrs(rc.Change)
			s.Replacements = append(s.Replacements, c)
		case a.Delete():
			s.Deletes = append(s.Deletes, c)
		case a.Forget():
			s.Forgets = append(s.Forgets, c)
		case a.Update():
			c.ChangedAttrs = changedAttrs(rc.Change)
			if destructive != nil {
				after, _ := rc.Change.After.(map[string]any)
				for _, attr := range c.ChangedAttrs {
					if destructive(rc.Type, attr, after) {
						c.DestructiveAttrs = append(c.DestructiveAttrs, attr)
					}
				}
			}
			if len(c.DestructiveAttrs) > 0 {
				s.DestructiveUpdates = append(s.DestructiveUpdates, c)
			} else {
				s.Updates = append(s.Updates, c)
			}
		default:
			// An action set this package does not know: the most
			// cautious class.
			c.ChangedAttrs = changedAttrs(rc.Change)
			s.Replacements = append(s.Replacements, c)
		}
	}
	return s
}

// changedAttrs returns the sorted top-level keys whose values differ
// between ch.Before and ch.After (a missing key counts as null), or that
// become unknown.
func changedAttrs(ch *tfjson.Change) []string {
	before, _ := ch.Before.(map[string]any)
	after, _ := ch.After.(map[string]any)
	unknown, _ := ch.AfterUnknown.(map[string]any)
	var out []string
	for _, m := range []map[string]any{before, after, unknown} {
		for k := range m {
			if slices.Contains(out, k) {
				continue
			}
			if !reflect.DeepEqual(before[k], after[k]) || anyTrue(unknown[k]) {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}

// anyTrue reports whether an after_unknown value marks anything unknown:
// true itself, or a list or object holding true.
func anyTrue(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case []any:
		return slices.ContainsFunc(x, anyTrue)
	case map[string]any:
		for _, e := range x {
			if anyTrue(e) {
				return true
			}
		}
	}
	return false
}
