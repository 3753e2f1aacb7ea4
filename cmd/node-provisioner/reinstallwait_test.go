package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store"
)

// TestReinstallWaits: reinstall --wait prints the machine's steps from
// the window's events (its DHCP offer by MAC, its answer and its install
// by name; another machine's and a refused answer are not its) until it
// is installed again, then its line of steps; with none, --timeout ends
// the wait with exit 1 saying nothing was powered off.
func TestReinstallWaits(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if r := np(t, dir, "register", "pve4", "--mac", "52:54:00:00:00:44", "--boot-disk", "any"); r.code != 0 {
		t.Fatalf("register: %d %s", r.code, r.err)
	}
	stores, err := store.Open(t.Context(), dir, store.Options{SecretsDir: dir + "/secrets"})
	if err != nil {
		t.Fatal(err)
	}
	install := func() {
		t.Helper()
		if _, err := stores.Registrations().Consume(ctx, "pve4", registry.ConsumeRecord{Time: time.Now(), ClientIP: "192.0.2.44"}); err != nil {
			t.Fatal(err)
		}
	}
	install()
	done := make(chan result)
	go func() { done <- np(t, dir, "reinstall", "pve4", "--force", "--wait", "--timeout", "20s") }()
	time.Sleep(time.Second) // re-armed, and its stream open
	for _, e := range []backend.Event{{Kind: events.DHCPOffer, MAC: "52:54:00:00:00:99", Detail: "another machine"}, {Kind: events.DHCPOffer, MAC: "52:54:00:00:00:44", Detail: "ipxe"},
		{Kind: events.Answer, Node: "pve4", Status: 403}, {Kind: events.Answer, Node: "pve4", Status: 200, Detail: "9.2"}, {Kind: events.Installed, Node: "pve4", Status: 200}} {
		e.Time = time.Now()
		if err := stores.Events().Append(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	r := <-done
	if r.code != 0 || !strings.HasPrefix(r.stdout, "pve4: re-armed for one install with a new root password; netboot its machine\n") ||
		!regexp.MustCompile(`pve4\s+dhcp-offer\s+ipxe\n.*pve4\s+answer\s+9.2\n.*pve4\s+installed`).MatchString(r.stdout) ||
		strings.Contains(r.stdout, "another machine") || !regexp.MustCompile(`Machine pve4: started > dhcp-offer > answer > installed \(\d+s\)\n$`).MatchString(r.stdout) {
		t.Errorf("reinstall --wait: exit %d\n%s%s", r.code, r.stdout, r.err)
	}

	install()
	r = np(t, dir, "reinstall", "pve4", "--force", "--wait", "--timeout", "1s")
	if r.code != 1 || !strings.Contains(r.err, "reinstall pve4: not installed within 1s (nothing was powered off)") || !strings.Contains(r.stdout, "Machine pve4: started\n") {
		t.Errorf("reinstall --wait with no install: exit %d\n%s%s", r.code, r.stdout, r.err)
	}
	if r := np(t, dir, "reinstall", "pve4", "--force", "--wait", "--timeout", "0s"); r.code != 2 {
		t.Errorf("--timeout 0s: exit %d %s", r.code, r.err)
	}
}
