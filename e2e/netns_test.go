package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/plasmactl/plasma-node/internal/netnstest"
	"github.com/plasmactl/plasma-node/pxe/bootassets"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
	"github.com/pin/tftp/v3"

	"github.com/plasmactl/plasma-node/pxe/dhcpserver"
)

// The lab: namespace A is the PXE client's, namespace B the server's,
// joined by a veth pair.
const (
	nsClient  = "pn-e2e-client"
	nsServer  = "pn-e2e-server"
	vethA     = "pn-veth-a"
	vethB     = "pn-veth-b"
	serverIP  = "10.77.0.2"
	clientMAC = "52:54:00:77:00:10"
)

// lab creates the two namespaces and the veth pair, and removes them when
// the test ends, also when it fails.
func lab(t *testing.T) {
	t.Helper()
	netnstest.Lab{Client: nsClient, Server: nsServer, VethA: vethA, VethB: vethB, ClientCIDR: "10.77.0.100/24", ServerCIDR: serverIP + "/24"}.Create(t)
}

func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	netnstest.Missing(t, format, args...)
}

func run(t *testing.T, args ...string) {
	t.Helper()
	netnstest.Run(t, args...)
}

// clientResult is what the client side of the lab saw.
type clientResult struct {
	OfferFile  string `json:"offer_file"`
	NextServer string `json:"next_server"`
	TFTPBytes  int64  `json:"tftp_bytes"`
	Script     string `json:"script"`
	Errors     []string
}

// TestNetbootThroughNamespaces: a PXE client in one namespace broadcasts a
// DISCOVER, node-provisioner serve in the other offers snponly.efi, the
// client fetches it by TFTP and its script by HTTP; after the TTL all
// three are silent.
func TestNetbootThroughNamespaces(t *testing.T) {
	if _, err := os.Stat("/usr/lib/ipxe/snponly.efi"); err != nil {
		skipOrFail(t, "needs Debian's ipxe package (/usr/lib/ipxe)")
	}
	lab(t)
	state := t.TempDir()
	// A staged release, so the script boots rather than exits.
	rel := filepath.Join(state, "assets", "9.2-1")
	os.MkdirAll(rel, 0o755)
	os.WriteFile(filepath.Join(rel, bootassets.AssetKernel), []byte("kernel"), 0o644)
	os.WriteFile(filepath.Join(rel, bootassets.AssetNetbootInitrd), []byte("initrd"), 0o644)
	np := filepath.Join(bin, "node-provisioner")
	if out, err := exec.Command(np, "--state-dir", state, "register", "lab1", "--mac", clientMAC, "--boot-disk", "vda").CombinedOutput(); err != nil {
		t.Fatalf("register: %v\n%s", err, out)
	}
	const ttl = 8 * time.Second
	serve := exec.Command("ip", "netns", "exec", nsServer, np, "--state-dir", state, "--secrets-dir", filepath.Join(state, "secrets"),
		"serve", "--http", serverIP+":8090", "--ttl", ttl.String(), "--dhcp-interface", vethB)
	var logs bytes.Buffer
	serve.Stdout, serve.Stderr = &logs, &logs
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	defer func() {
		serve.Process.Kill()
		serve.Wait()
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	}()
	waitFor(t, 10*time.Second, func() bool { return strings.Contains(logs.String(), "Serving answers") })

	res := clientSide(t, 3*time.Second)
	if len(res.Errors) > 0 {
		t.Fatalf("client: %v", res.Errors)
	}
	want, _ := os.ReadFile("/usr/lib/ipxe/snponly.efi")
	if res.OfferFile != "snponly.efi" || res.NextServer != serverIP || res.TFTPBytes != int64(len(want)) {
		t.Errorf("offer %q from %s, TFTP %d bytes; want snponly.efi from %s, %d bytes", res.OfferFile, res.NextServer, res.TFTPBytes, serverIP, len(want))
	}
	if !strings.Contains(res.Script, "kernel http://"+serverIP+":8090/assets/9.2-1/linux26") {
		t.Errorf("script does not boot the staged kernel from the concrete address:\n%s", res.Script)
	}

	// After the TTL, every service is silent.
	if d := time.Until(started.Add(ttl + time.Second)); d > 0 {
		time.Sleep(d)
	}
	late := clientSide(t, 1500*time.Millisecond)
	if late.OfferFile != "" || late.TFTPBytes != 0 || late.Script != "" {
		t.Errorf("after the TTL: offer %q, TFTP %d bytes, script %q; want silence", late.OfferFile, late.TFTPBytes, late.Script)
	}
}

func waitFor(t *testing.T, d time.Duration, ok func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !ok() {
		if time.Now().After(end) {
			t.Fatal("timed out")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// clientSide runs this test binary as the client inside namespace A.
func clientSide(t *testing.T, wait time.Duration) clientResult {
	t.Helper()
	cmd := exec.Command("ip", "netns", "exec", nsClient, os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), "PN_E2E_CLIENT="+wait.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("client: %v\n%s", err, out)
	}
	var r clientResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	return r
}

// pxeClient is the client side: DISCOVER, TFTP, HTTP, reported as JSON.
func pxeClient(wait time.Duration) clientResult {
	var r clientResult
	fail := func(format string, args ...any) { r.Errors = append(r.Errors, fmt.Sprintf(format, args...)) }
	mac, _ := net.ParseMAC(clientMAC)
	conn, err := dhcpserver.Listen(vethA, 68)
	if err != nil {
		fail("listen: %v", err)
		return r
	}
	defer conn.Close()
	req, _ := dhcpv4.NewDiscovery(mac,
		dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00007:UNDI:003016")),
		dhcpv4.WithOption(dhcpv4.OptClientArch(iana.EFI_X86_64)),
		dhcpv4.WithBroadcast(true))
	deadline := time.Now().Add(wait)
	buf := make([]byte, 1500)
	for r.OfferFile == "" && time.Now().Before(deadline) {
		conn.WriteTo(req.ToBytes(), &net.UDPAddr{IP: net.IPv4bcast, Port: 67})
		conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		for {
			n, _, err := conn.ReadFrom(buf)
			if err != nil {
				break
			}
			if o, err := dhcpv4.FromBytes(buf[:n]); err == nil && o.TransactionID == req.TransactionID && o.MessageType() == dhcpv4.MessageTypeOffer {
				r.OfferFile, r.NextServer = o.BootFileName, o.ServerIPAddr.String()
				break
			}
		}
	}
	if c, err := tftp.NewClient(serverIP + ":69"); err == nil {
		c.SetTimeout(wait / 3)
		c.SetRetries(1)
		if wt, err := c.Receive("snponly.efi", "octet"); err == nil {
			r.TFTPBytes, _ = wt.WriteTo(io.Discard)
		}
	}
	hc := &http.Client{Timeout: wait}
	if resp, err := hc.Get("http://" + serverIP + ":8090/boot.ipxe?mac=" + clientMAC + "&platform=efi"); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		r.Script = string(b)
	}
	return r
}
