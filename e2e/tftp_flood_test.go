package e2e

import (
	"bytes"
	"encoding/binary"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tftpFlood is the client side of TestTFTPFloodLeavesHTTPAndDHCPAnswering:
// count read requests for snponly.efi, each from its own port, none ever
// acknowledged. It returns how many it sent.
func tftpFlood(count int) int {
	rrq := binary.BigEndian.AppendUint16(nil, 1)
	rrq = append(append(append(rrq, "snponly.efi"...), 0), "octet\x00blksize\x001468\x00tsize\x000\x00"...)
	sent := 0
	for range count {
		c, err := net.ListenUDP("udp4", nil)
		if err != nil {
			continue
		}
		if _, err := c.WriteToUDP(rrq, &net.UDPAddr{IP: net.ParseIP(serverIP), Port: 69}); err == nil {
			sent++
		}
		c.Close()
	}
	return sent
}

// TestTFTPFloodLeavesHTTPAndDHCPAnswering: node-provisioner serves with a
// descriptor limit of 1024 while 3 000 TFTP read requests that never
// acknowledge arrive; proxy-DHCP and HTTP keep answering, and once the
// flood's transfers have stalled a real download replaces one of them.
func TestTFTPFloodLeavesHTTPAndDHCPAnswering(t *testing.T) {
	if _, err := os.Stat("/usr/lib/ipxe/snponly.efi"); err != nil {
		skipOrFail(t, "needs Debian's ipxe package (/usr/lib/ipxe)")
	}
	if _, err := exec.LookPath("prlimit"); err != nil {
		skipOrFail(t, "needs prlimit (util-linux)")
	}
	lab(t)
	state := t.TempDir()
	np := filepath.Join(bin, "node-provisioner")
	if out, err := exec.Command(np, "--state-dir", state, "register", "lab1", "--mac", clientMAC, "--boot-disk", "vda").CombinedOutput(); err != nil {
		t.Fatalf("register: %v\n%s", err, out)
	}
	// Soft and hard: Go raises the soft limit to the hard one at start.
	serve := exec.Command("ip", "netns", "exec", nsServer, "prlimit", "--nofile=1024:1024", np, "--state-dir", state, "--secrets-dir", filepath.Join(state, "secrets"),
		"serve", "--http", serverIP+":8090", "--ttl", "2m", "--dhcp-interface", vethB)
	var logs bytes.Buffer
	serve.Stdout, serve.Stderr = &logs, &logs
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		serve.Process.Kill()
		serve.Wait()
		if t.Failed() {
			t.Logf("server log (last 4 KiB):\n%s", tail(logs.String(), 4096))
		}
	}()
	waitFor(t, 10*time.Second, func() bool { return strings.Contains(logs.String(), "Serving answers") })

	flood := exec.Command("ip", "netns", "exec", nsClient, os.Args[0], "-test.run", "^$")
	flood.Env = append(os.Environ(), "PN_E2E_TFTP_FLOOD=3000")
	out, err := flood.Output()
	if err != nil || strings.TrimSpace(string(out)) != "3000" {
		t.Fatalf("flood: %v, sent %s", err, out)
	}
	res := clientSide(t, 3*time.Second)
	if res.OfferFile != "snponly.efi" {
		t.Errorf("proxy-DHCP after the flood: offer %q, want snponly.efi (errors %v)", res.OfferFile, res.Errors)
	}
	if !strings.Contains(res.Script, "#!ipxe") {
		t.Errorf("HTTP after the flood: script %q, want an iPXE script", res.Script)
	}
	if strings.Contains(logs.String(), "too many open files") {
		t.Error("the server ran out of descriptors")
	}

	// The flood's transfers are stalled now: a real download takes the
	// place of the one stalled longest. The server frees a place for a
	// waiting request at its stall sweep, which a loaded machine may
	// reach after the client's deadline: a real PXE client asks again,
	// and so does this one, three times at most.
	time.Sleep(2500 * time.Millisecond)
	want, _ := os.ReadFile("/usr/lib/ipxe/snponly.efi")
	var got int64
	for try := 0; try < 3 && got != int64(len(want)); try++ {
		got = clientSide(t, 3*time.Second).TFTPBytes
	}
	if got != int64(len(want)) {
		t.Errorf("TFTP after the flood stalled: %d bytes in three tries, want %d", got, len(want))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
