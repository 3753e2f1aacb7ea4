package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/netnstest"
	"github.com/plasmactl/plasma-node/pxe/bootassets"
)

// The namespace lab of TestWholeWindowInNamespaces: the machine's
// namespace and the window's, joined by a veth pair.
var lab = netnstest.Lab{Client: "pn-embed-client", Server: "pn-embed-server", VethA: "pn-embed-a", VethB: "pn-embed-b",
	ClientCIDR: "10.81.0.100/24", ServerCIDR: "10.81.0.2/24"}

const (
	labServerIP = "10.81.0.2"
	labMAC      = "52:54:00:ba:5e:11"
	labInfo     = `{"product":{"product":"pve"},"iso":{"release":"9.2"},"network_interfaces":[{"link":"enp1s0","mac":"52:54:00:BA:5E:11"}]}`
)

// TestMain plays one side of the lab when the test binary is run in a
// namespace: EMBED_PXE_SERVE=<state dir> runs the example's window on
// the lab's interface; EMBED_PXE_CLIENT=1 boots a machine and prints
// what it saw as JSON.
func TestMain(m *testing.M) {
	if state := os.Getenv("EMBED_PXE_SERVE"); state != "" {
		o := options{http: labServerIP + ":8090", dhcpInterface: lab.VethB, stateDir: state, ttl: time.Minute, serve: true}
		if err := run(context.Background(), o, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "embed-pxe:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv("EMBED_PXE_CLIENT") != "" {
		r := netnstest.PXEClient{MAC: labMAC, HTTPPort: 8090, SystemInfo: []byte(labInfo), Wait: 5 * time.Second}.Boot()
		json.NewEncoder(os.Stdout).Encode(r)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestEmbedPXERuns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, options{http: "127.0.0.1:0", ttl: time.Minute}, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"installer 52:54:00:BA:5E:11: POST /answer -> 200 OK",
		"fqdn = 'rack1-u07.lab.example'",
		"disk-list = ['nvme0n1']",
		"installer 52:54:00:ba:5e:11: POST /answer -> 404 Not Found\nno answer for this machine: rack1-u07 was answered already",
		"installer aa:bb:cc:00:00:01: POST /answer -> 404 Not Found\nno answer for this machine: MACs aa:bb:cc:00:00:01 are not in the inventory",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for a process's output and a test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestWholeWindowInNamespaces runs the example's window, its own
// inventory as the backend, on a veth in one namespace, and boots a
// machine from the other: the proxy offer, the iPXE binary by TFTP, the
// install script and the answer all come from the one window, and the
// example holds no socket or handler code of its own.
func TestWholeWindowInNamespaces(t *testing.T) {
	ipxe, err := os.ReadFile("/usr/lib/ipxe/snponly.efi")
	if err != nil {
		netnstest.Missing(t, "needs Debian's ipxe package (/usr/lib/ipxe/snponly.efi)")
	}
	lab.Create(t)
	state := t.TempDir()
	rel := filepath.Join(state, bootassets.AssetsDir, "9.2-1")
	if err := os.MkdirAll(rel, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{bootassets.AssetKernel, bootassets.AssetNetbootInitrd} {
		if err := os.WriteFile(filepath.Join(rel, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	serve := exec.Command("ip", "netns", "exec", lab.Server, os.Args[0], "-test.run", "^$")
	serve.Env = append(os.Environ(), "EMBED_PXE_SERVE="+state)
	var logs syncBuffer
	serve.Stdout, serve.Stderr = &logs, &logs
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		serve.Process.Kill()
		serve.Wait()
		if t.Failed() {
			t.Logf("window log:\n%s", logs.String())
		}
	}()
	for end := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), "window open at"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the window did not open")
		}
	}
	client := exec.Command("ip", "netns", "exec", lab.Client, os.Args[0], "-test.run", "^$")
	client.Env = append(os.Environ(), "EMBED_PXE_CLIENT=1")
	out, err := client.Output()
	if err != nil {
		t.Fatalf("client: %v\n%s", err, out)
	}
	var r netnstest.PXEResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	if len(r.Errors) > 0 {
		t.Fatalf("client: %v", r.Errors)
	}
	if r.OfferFile != "snponly.efi" || r.NextServer != labServerIP || r.TFTPBytes != int64(len(ipxe)) {
		t.Errorf("offer %q from %s, TFTP %d bytes; want snponly.efi from %s, %d bytes", r.OfferFile, r.NextServer, r.TFTPBytes, labServerIP, len(ipxe))
	}
	if !strings.Contains(r.Script, "kernel http://"+labServerIP+":8090/assets/9.2-1/linux26") || !strings.Contains(r.Script, "installing Proxmox VE on rack1-u07") {
		t.Errorf("the script does not install rack1-u07 from the window:\n%s", r.Script)
	}
	if r.AnswerCode != 200 || !strings.Contains(r.Answer, "fqdn = 'rack1-u07.lab.example'") || !strings.Contains(r.Answer, "disk-list = ['nvme0n1']") {
		t.Errorf("answer %d:\n%s", r.AnswerCode, r.Answer)
	}
}
