package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
	"github.com/plasmactl/plasma-node/pxe/tlscert"
)

// TestDiscoveredNeedsTheReadScope: GET /api/v1/discovered lists the
// inbox to any token (read scope and up), refuses a request without one,
// and the client's Discovered gives the same; without an inbox, 501.
func TestDiscoveredNeedsTheReadScope(t *testing.T) {
	var inbox discovery.Store
	e := newEnv(t, func(c *api.Config) {
		in, err := folder.OpenInbox(stateOf(c), discovery.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		c.Inbox, inbox = in, in
	})
	report := discovery.Report{NICs: []discovery.NIC{{MAC: "52:54:00:aa:00:01"}}, DMI: discovery.DMI{Serial: "S1"},
		Disks: []discovery.Disk{{Name: "nvme0n1", SizeBytes: 1 << 30, Serial: "NV-1"}}}
	if _, err := inbox.Put(context.Background(), report, time.Now()); err != nil {
		t.Fatal(err)
	}
	if r := e.do(t, "GET", api.Prefix+"/discovered", "", ""); r.status != http.StatusUnauthorized {
		t.Errorf("without a token: %d, want 401", r.status)
	}
	r := e.do(t, "GET", api.Prefix+"/discovered", e.tokens["read"], "")
	var recs []discovery.Record
	if err := json.Unmarshal([]byte(r.body), &recs); r.status != 200 || err != nil || len(recs) != 1 || recs[0].Disks[0].Serial != "NV-1" {
		t.Errorf("with a read token: %d %s %v", r.status, r.body, err)
	}
	c, err := client.New(client.Options{URL: e.ts.URL, Token: e.tokens["read"], Fingerprint: tlscert.Fingerprint(e.ts.Certificate().Raw)})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Discovered(context.Background())
	if err != nil || len(got) != 1 || got[0].DMI.Serial != "S1" {
		t.Errorf("client Discovered = %+v, %v", got, err)
	}
	none := newEnv(t, nil)
	if r := none.do(t, "GET", api.Prefix+"/discovered", none.tokens["read"], ""); r.status != http.StatusNotImplemented {
		t.Errorf("without an inbox: %d, want 501", r.status)
	}
}
