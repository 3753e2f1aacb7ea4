package api_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/enrol"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
	"github.com/plasmactl/plasma-node/pxe/tlscert"
)

// TestRulesNeedTheAdminScopeAndMatchTheLocalErrors: the /rules
// endpoints take an admin token only; through the client a rule is
// added, refused as the local calls refuse it (a bad template, a
// priority tie, an unknown name), previewed over the inbox, applied as
// the whole set and removed.
func TestRulesNeedTheAdminScopeAndMatchTheLocalErrors(t *testing.T) {
	ctx := context.Background()
	var inbox discovery.Store
	e := newEnv(t, func(c *api.Config) {
		in, err := folder.OpenInbox(stateOf(c), discovery.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		c.Inbox, inbox, c.Rules = in, in, folder.OpenRules(stateOf(c))
	})
	for _, tok := range []string{"read", "register"} {
		if r := e.do(t, "GET", api.Prefix+"/rules", e.tokens[tok], ""); r.status != http.StatusForbidden {
			t.Errorf("GET /rules with a %s token: %d, want 403", tok, r.status)
		}
		if r := e.do(t, "GET", api.Prefix+"/rules/preview", e.tokens[tok], ""); r.status != http.StatusForbidden {
			t.Errorf("GET /rules/preview with a %s token: %d, want 403", tok, r.status)
		}
	}
	c, err := client.New(client.Options{URL: e.ts.URL, Token: e.tokens["admin"], Fingerprint: tlscert.Fingerprint(e.ts.Certificate().Raw)})
	if err != nil {
		t.Fatal(err)
	}
	rule := enrol.Rule{Name: "qemu", Priority: 1, Hostname: "vm-{n:02}", Match: enrol.Match{Vendor: "QEMU"}}
	if _, err := c.AddRule(ctx, rule, false); err != nil {
		t.Fatal(err)
	}
	bad := rule
	bad.Name, bad.Priority, bad.Hostname = "bad", 2, "VM-{n}"
	if _, err := c.AddRule(ctx, bad, false); !errors.Is(err, enrol.ErrInvalidRule) {
		t.Errorf("a bad template = %v, want ErrInvalidRule", err)
	}
	tie := rule
	tie.Name, tie.Hostname = "tie", "tie-{n}"
	if _, err := c.AddRule(ctx, tie, false); !errors.Is(err, enrol.ErrPriorityTaken) {
		t.Errorf("a priority tie = %v, want ErrPriorityTaken", err)
	}
	if _, err := c.AddRule(ctx, rule, false); !errors.Is(err, enrol.ErrExists) {
		t.Errorf("a name again = %v, want ErrExists", err)
	}
	if err := c.RemoveRule(ctx, "nope"); !errors.Is(err, enrol.ErrNotFound) {
		t.Errorf("removing an unknown rule = %v, want ErrNotFound", err)
	}
	rep := discovery.Report{NICs: []discovery.NIC{{MAC: "52:54:00:aa:00:01"}}, DMI: discovery.DMI{Vendor: "QEMU"},
		Disks: []discovery.Disk{{Name: "vda", SizeBytes: 1 << 30, Serial: "V-1"}}}
	if _, err := inbox.Put(ctx, rep, time.Now()); err != nil {
		t.Fatal(err)
	}
	ds, err := c.PreviewRules(ctx)
	if err != nil || len(ds) != 1 || ds[0].Rule != "qemu" || ds[0].Name != "vm-01" || ds[0].BootDisk != "V-1" {
		t.Errorf("preview = %+v, %v; want vm-01 on V-1 by qemu", ds, err)
	}
	st, err := c.ApplyRules(ctx, []enrol.Rule{tie})
	if err != nil || len(st.Rules) != 1 || st.Rules[0].Name != "tie" {
		t.Errorf("apply = %+v, %v; want the set of tie", st, err)
	}
	if st, err := c.Rules(ctx); err != nil || len(st.Rules) != 1 {
		t.Errorf("rules = %+v, %v", st, err)
	}
}
