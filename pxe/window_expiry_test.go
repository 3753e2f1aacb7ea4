package pxe

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"

	"github.com/plasmactl/plasma-node/pxe/dhcpserver"
	"github.com/plasmactl/plasma-node/pxe/internal/pxetest"
	"github.com/plasmactl/plasma-node/pxe/tftp"
)

// TestWindowExpiryStopsEveryService runs DHCP, TFTP and HTTP in one
// window with a short TTL: each answers before it runs out and none
// within a second after.
func TestWindowExpiryStopsEveryService(t *testing.T) {
	dc, _ := loopbackConn(t)
	pc, pxeAddr := loopbackConn(t)
	tconn, err := tftp.Listen(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fx := newTFTPFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	client := pxetest.NewDHCPClient(t)
	const ttl = 1500 * time.Millisecond
	s, err := New(Config{
		StateDir: t.TempDir(), Backend: allowFunc(allowOnly(testMAC)), Listener: ln, TTL: ttl, IPXEDir: fx.root,
		Routes:        map[string]http.Handler{"GET /status": http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})},
		DHCPInterface: "lo", ServerIP: testServerIP, DHCPConn: dc, PXEConn: pc, TFTPConn: tconn,
	})
	if err != nil {
		t.Fatal(err)
	}
	s.tweakDHCP = func(d *dhcpserver.Server) { d.Interface, d.ClientPort = "", client.Port }
	errc := make(chan error, 1)
	start := time.Now()
	go func() { errc <- s.Serve(context.Background()) }()
	<-s.Ready()
	tftpAddr := tconn.LocalAddr().(*net.UDPAddr)
	httpURL := "http://" + ln.Addr().String() + "/status"

	answers := func(wait time.Duration) (dhcp, tftp, web bool) {
		req, xid := withXID(t, byte(time.Now().UnixNano()), dhcpv4.MessageTypeRequest, join(uefiPXE, []dhcpv4.Modifier{dhcpv4.WithClientIP(net.IPv4(127, 0, 0, 1))})...)
		resp, _ := client.Exchange(t, req, pxeAddr, xid, wait)
		raw := pxetest.NewTFTPClient(t)
		raw.Request(pxetest.OpRRQ, tftpAddr, "ipxe.efi")
		op, _, _ := raw.Recv(wait)
		c := &http.Client{Timeout: wait}
		r, err := c.Get(httpURL)
		if err == nil {
			r.Body.Close()
		}
		return resp != nil, op == pxetest.OpDATA || op == pxetest.OpOACK, err == nil && r.StatusCode == 200
	}
	if d, tf, w := answers(time.Second); !d || !tf || !w {
		t.Fatalf("while open: dhcp %v, tftp %v, http %v; want all true", d, tf, w)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, ErrWindowExpired) {
			t.Fatalf("Serve = %v, want ErrWindowExpired", err)
		}
	case <-time.After(ttl + 3*time.Second):
		t.Fatal("Serve did not return after its TTL")
	}
	if late := time.Since(start) - ttl; late > time.Second {
		t.Errorf("Serve returned %v after the TTL, want within 1s", late)
	}
	if d, tf, w := answers(500 * time.Millisecond); d || tf || w {
		t.Errorf("after expiry: dhcp %v, tftp %v, http %v; want all silent", d, tf, w)
	}
}
