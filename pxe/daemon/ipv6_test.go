package daemon_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/daemon"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// TestTheAPIAndItsWindowsServeOverIPv6: a daemon whose API listens on
// an IPv6 address, or on every address (":0", as the default :8091
// does), serves its API over IPv6 to a client pinning its certificate
// (and over IPv4 too on every address), its running record names an
// address the local client dials, and a window it opens on an IPv6
// address serves a boot script over IPv6.
func TestTheAPIAndItsWindowsServeOverIPv6(t *testing.T) {
	if ln, err := net.Listen("tcp", "[::1]:0"); err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	} else {
		ln.Close()
	}
	tests := map[string]struct {
		api  string
		dial []string
	}{
		"an IPv6 API address":                  {"[::1]:0", []string{"::1"}},
		"every address, IPv4 and IPv6 at once": {":0", []string{"::1", "127.0.0.1"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			state := t.TempDir()
			d, err := daemon.New(daemon.Config{StateDir: state, Addr: tc.api, Window: pxe.Config{HTTPAddr: "[::1]:0"}})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			done := make(chan error, 1)
			go func() { done <- d.Run(ctx) }()
			t.Cleanup(func() { cancel(); <-done })
			select {
			case <-d.Ready():
			case err := <-done:
				t.Fatalf("daemon: %v", err)
			}
			st, _ := folder.OpenTokens(state, nil)
			tok, err := st.Create(ctx, "admin", apitoken.ScopeAdmin, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			_, port, _ := net.SplitHostPort(d.Addr().String())
			for _, host := range tc.dial {
				c, err := client.New(client.Options{URL: "https://" + net.JoinHostPort(host, port), Token: tok, Fingerprint: d.Fingerprint(), Timeout: 10 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				if err := c.Health(ctx); err != nil {
					t.Errorf("API over %s: %v", host, err)
				}
			}
			rec, ok, err := daemon.Running(state)
			if err != nil || !ok {
				t.Fatalf("running record: %v %v", ok, err)
			}
			local, err := daemon.LocalClient(state, rec, tok, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := local.Health(ctx); err != nil {
				t.Errorf("the local client at %s: %v", rec.URL(), err)
			}
			mac := "52:54:00:00:06:01"
			reg := registry.Registration{Name: "v6node", MACs: []string{mac}, BootDisk: answer.BootDisk{Kind: answer.BootDiskAny}}
			if _, err := local.Register(ctx, reg, registry.RegisterOptions{}); err != nil {
				t.Fatal(err)
			}
			w, err := local.OpenWindow(ctx, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.Get("http://" + w.HTTP + "/boot.ipxe?mac=" + mac)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("boot script from the window on %s: %d", w.HTTP, resp.StatusCode)
			}
		})
	}
}
