package netboot

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/backend"
)

// inventoryOf is a backend that answers nothing and lists nodes: the
// page's rendering of them is what is under test.
type inventoryOf []backend.Node

func (inventoryOf) Allow(net.HardwareAddr) bool { return false }
func (inventoryOf) Boot(context.Context, string) (backend.Boot, error) {
	return backend.Boot{}, backend.ErrNoAnswer
}
func (inventoryOf) Answer(context.Context, backend.AnswerRequest) (*backend.Answer, error) {
	return nil, backend.ErrNoAnswer
}
func (n inventoryOf) Nodes(context.Context) ([]backend.Node, error) { return n, nil }

// TestStatusPageShowsTheInstalledAddressAndHostKeys: the page and GET
// /status show an installed node's host key fingerprints and its
// address masked, and mask the report's MACs, disk serials and
// machine-id as they mask the pins; the full page and report
// ([Handler.FullPage], [Handler.FullStatus]) show the address whole.
func TestStatusPageShowsTheInstalledAddressAndHostKeys(t *testing.T) {
	at := time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC)
	fp := "SHA256:4D27bvzYLJ3EVO25HEFvpoJ1Mums4LxBPaiAL2usvIw"
	node := backend.Node{Name: "pve1", State: backend.StateInstalled, MACs: []string{"52:54:00:ba:5e:11"}, Created: at, ConsumedAt: &at, InstalledAt: &at,
		Address: "192.0.2.41/24", HostKeyFingerprints: []string{fp},
		Install: &answer.InstallReport{MachineID: "4f3c2b1a09f8e7d6c5b4a39281706f5e", MACs: []string{"52:54:00:ba:5e:11", "52:54:00:ba:5e:12"},
			Management: &answer.ReportInterface{Name: "nic0", MAC: "52:54:00:ba:5e:11", Address: netip.MustParsePrefix("192.0.2.41/24")},
			BootDisks:  []answer.ReportDisk{{Name: "/dev/nvme0n1", Serial: "25414A800205"}}}}
	h, err := New(Config{Backend: inventoryOf{node}, BaseURL: testBase})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /full/page", h.FullPage)
	mux.HandleFunc("GET /full/status", h.FullStatus)
	mux.Handle("/", h)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	get := func(path string) string {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	page := get("/")
	for _, want := range []string{`<td data-address="….41">….41</td>`, `<code data-host-key="` + fp + `">` + fp + `</code>`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	status := get("/status")
	var rep StatusReport
	if err := json.Unmarshal([]byte(status), &rep); err != nil || len(rep.Nodes) != 1 || rep.Nodes[0].Install == nil {
		t.Fatalf("GET /status: %v\n%s", err, status)
	}
	n := rep.Nodes[0]
	if n.Address != "….41" || len(n.HostKeyFingerprints) != 1 || n.HostKeyFingerprints[0] != fp {
		t.Errorf("GET /status: address %q, fingerprints %v", n.Address, n.HostKeyFingerprints)
	}
	for _, secret := range []string{"52:54:00:ba", "25414A80", "4f3c2b1a", "192.0.2.41"} {
		if strings.Contains(status, secret) || strings.Contains(page, secret) {
			t.Errorf("the page or GET /status shows %q unmasked", secret)
		}
	}
	if n.Install.Management.MAC != "…:5e:11" || n.Install.BootDisks[0].Serial != "…0205" || n.Install.MachineID != "…6f5e" {
		t.Errorf("masked report: %+v", n.Install)
	}
	full := get("/full/page")
	for _, want := range []string{`<td data-address="192.0.2.41/24">192.0.2.41/24</td>`, "52:54:00:ba:5e:11"} {
		if !strings.Contains(full, want) {
			t.Errorf("full page lacks %q", want)
		}
	}
	if err := json.Unmarshal([]byte(get("/full/status")), &rep); err != nil || len(rep.Nodes) != 1 || rep.Nodes[0].Address != "192.0.2.41/24" ||
		rep.Nodes[0].Install.Management.Address != netip.MustParsePrefix("192.0.2.41/24") || rep.Nodes[0].Install.MachineID != node.Install.MachineID {
		t.Errorf("full GET /status: %v %+v", err, rep.Nodes)
	}
}
