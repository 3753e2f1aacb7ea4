package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The IPv6 flood lab: one namespace whose loopback holds the window's
// address, the flooding /64's addresses and one of another /64 (no
// dummy interface: the test host's kernel may lack the module).
const (
	nsV6       = "pn-e2e-v6flood"
	v6Window   = "2001:db8:64:ff::1"
	v6Flooding = "2001:db8:64:1::" // 1 000 addresses and a fresh one
	v6Other    = "2001:db8:64:2::1"
	v6Flood    = 1000
	v6Fresh    = v6Flooding + "ffff"
)

// v6Lab makes the namespace and removes it when the test ends.
func v6Lab(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		skipOrFail(t, "the IPv6 flood lab needs root")
	}
	exec.Command("ip", "netns", "del", nsV6).Run()
	t.Cleanup(func() { exec.Command("ip", "netns", "del", nsV6).Run() })
	run(t, "ip", "netns", "add", nsV6)
	run(t, "ip", "-n", nsV6, "link", "set", "lo", "up")
	var batch strings.Builder
	for _, a := range append(v6FloodAddrs(), v6Window, v6Fresh, v6Other) {
		fmt.Fprintf(&batch, "addr add %s/64 dev lo nodad\n", a)
	}
	file := filepath.Join(t.TempDir(), "addrs")
	if err := os.WriteFile(file, []byte(batch.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, "ip", "-n", nsV6, "-batch", file)
}

// v6FloodAddrs are the 1 000 flooding addresses of one /64.
func v6FloodAddrs() []string {
	out := make([]string, v6Flood)
	for i := range out {
		out[i] = fmt.Sprintf("%s%x", v6Flooding, i+1)
	}
	return out
}

// v6FloodResult is what the flooding side saw.
type v6FloodResult struct {
	// Flood counts the statuses of the refused answers (0: no reply
	// within a second, the client gave up).
	Flood map[int]int
	// Fresh, Other and IPv4 are how long a made-up MAC's answer took
	// from a fresh address of the flooding /64, from another /64 and
	// from 127.0.0.1, and Statuses their statuses in that order.
	Fresh, Other, IPv4 time.Duration
	Statuses           [3]int
	// Held is how many connections of the flooding /64 were held open;
	// FreshServed and OtherServed whether a request from a fresh
	// address of that /64 and from another /64 got a reply meanwhile.
	Held                     int
	FreshServed, OtherServed bool
	Errors                   []string
}

// TestIPv6FloodsAreBoundedAsOneSource: node-provisioner serve in a
// namespace of its own, listening on every address. 1 000 addresses of
// one /64 post made-up MACs, giving up after a second: the refusals and
// the connections count for the /64, so a fresh address of it is slowed
// (the refusals' delay, behind the places the flood's slowed requests
// hold), while another /64 and an IPv4 client are answered at once. Then 1 000 connections of that /64 held open take
// the /64's places (each address has a client's own, the /64 together 8
// clients' worth): a fresh address of it waits, another /64 is served.
func TestIPv6FloodsAreBoundedAsOneSource(t *testing.T) {
	v6Lab(t)
	e := newProvisionerEnv(t)
	e.netns = nsV6
	e.run(t, "register", "v6pve", "--mac", "52:54:00:64:00:01", "--boot-disk", "any")
	url, _ := e.serve(t, "--http", "[::]:0")
	_, port, err := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/answer"))
	if err != nil {
		t.Fatalf("serve's URL %s: %v", url, err)
	}
	flood := exec.Command("ip", "netns", "exec", nsV6, os.Args[0], "-test.run", "^$")
	flood.Env = append(os.Environ(), "PN_E2E_V6FLOOD="+port)
	out, err := flood.Output()
	var res v6FloodResult
	if err != nil || json.Unmarshal(out, &res) != nil {
		t.Fatalf("the flooding side: %v\n%s", err, out)
	}
	t.Logf("flood %v; a made-up MAC from a fresh address of the /64 took %s, from another /64 %s, from IPv4 %s (%v); %d held, fresh served %v, other served %v; errors %v",
		res.Flood, res.Fresh, res.Other, res.IPv4, res.Statuses, res.Held, res.FreshServed, res.OtherServed, res.Errors)
	if res.Flood[http.StatusNotFound] < 5 || res.Flood[http.StatusNotFound]+res.Flood[0] != v6Flood {
		t.Errorf("the flood's statuses %v, want %d refusals (404) or give-ups", res.Flood, v6Flood)
	}
	if res.Statuses != [3]int{404, 404, 404} {
		t.Errorf("made-up MACs from a fresh address of the /64, another /64 and IPv4: %v, want 404 each", res.Statuses)
	}
	if res.Fresh < 800*time.Millisecond {
		t.Errorf("a fresh address of the flooding /64 was answered in %s: its /64's refusals did not slow it", res.Fresh)
	}
	if res.Other > 800*time.Millisecond || res.IPv4 > 800*time.Millisecond {
		t.Errorf("another /64 took %s and IPv4 %s: slowed for the flooding /64's refusals", res.Other, res.IPv4)
	}
	if res.Held != v6Flood {
		t.Errorf("%d connections of the /64 held, want %d (errors %v)", res.Held, v6Flood, res.Errors)
	}
	if res.FreshServed {
		t.Error("a fresh address of the /64 holding 1 000 connections was served at once: its places are not the /64's")
	}
	if !res.OtherServed {
		t.Errorf("another /64 was not served while the first held its places (errors %v)", res.Errors)
	}
}

// runV6Flood is the flooding side, run in the lab's namespace against
// the window's port; it prints a v6FloodResult.
func runV6Flood(port string) int {
	var res v6FloodResult
	var mu sync.Mutex
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if len(res.Errors) < 10 {
			res.Errors = append(res.Errors, err.Error())
		}
	}
	window := net.JoinHostPort(v6Window, port)
	post := func(from, host string, i int, timeout time.Duration) (int, time.Duration) {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c := &http.Client{Timeout: timeout, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
		body := fmt.Sprintf(`{"iso":{"release":"9.2"},"product":{"product":"pve"},"network_interfaces":[{"link":"e0","mac":"02:64:00:00:%02x:%02x"}]}`, i>>8, i&0xff)
		start := time.Now()
		resp, err := c.Post("http://"+host+"/answer", "application/json", strings.NewReader(body))
		if err != nil {
			return 0, time.Since(start)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, time.Since(start)
	}
	res.Flood = map[int]int{}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 50)
	for i, a := range v6FloodAddrs() {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			code, _ := post(a, window, i, time.Second)
			mu.Lock()
			res.Flood[code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	time.Sleep(time.Second) // the server sees the clients that gave up go
	res.Statuses[0], res.Fresh = post(v6Fresh, window, 5000, 15*time.Second)
	res.Statuses[1], res.Other = post(v6Other, window, 5001, 15*time.Second)
	res.Statuses[2], res.IPv4 = post("127.0.0.1", net.JoinHostPort("127.0.0.1", port), 5002, 15*time.Second)

	var held []net.Conn
	for _, a := range v6FloodAddrs() {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(a)}, Timeout: 5 * time.Second}
		c, err := d.Dial("tcp", window)
		if err != nil {
			fail(err)
			continue
		}
		held = append(held, c)
	}
	res.Held = len(held)
	time.Sleep(300 * time.Millisecond)
	served := func(from string) bool {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
		c, err := d.DialContext(context.Background(), "tcp", window)
		if err != nil {
			fail(err)
			return false
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(2 * time.Second))
		io.WriteString(c, "GET /status HTTP/1.1\r\nHost: w\r\nConnection: close\r\n\r\n")
		b := make([]byte, 12)
		n, _ := io.ReadFull(c, b)
		return strings.HasPrefix(string(b[:n]), "HTTP/1.1 ")
	}
	res.FreshServed = served(v6Fresh)
	res.OtherServed = served(v6Other)
	for _, c := range held {
		c.Close()
	}
	json.NewEncoder(os.Stdout).Encode(res)
	return 0
}
