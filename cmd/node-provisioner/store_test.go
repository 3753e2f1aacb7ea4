package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"

	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/store"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// TestStoreFlagRefusals: a --store that is not a PostgreSQL URL, or that
// holds a password (an argument every user of the host sees), is a
// usage error that does not show the password.
func TestStoreFlagRefusals(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ store, says string }{
		{store: "postgres://np:hunter2-Pa55@db.example/np", says: registrar.EnvStore},
		{store: "postgres://db.example/np?password=hunter2-Pa55", says: registrar.EnvStore},
		{store: "mysql://np:hunter2-Pa55@db.example/np", says: "postgres://"},
	} {
		r := np(t, dir, "--store", tc.store, "list")
		if r.code != 2 || !strings.Contains(r.err, tc.says) || strings.Contains(r.err+r.stdout, "hunter2") {
			t.Errorf("--store %s list: exit %d %q; want 2 naming %s, without the password", registrar.EnvStore, r.code, r.err, tc.says)
		}
	}
}

// TestStoreSharedByTwoHosts: two state folders (two hosts) on one
// PostgreSQL store given in NODE_PROVISIONER_STORE: a registration and a
// token made through one are listed by the other, an unregister on the
// second is seen by the first; the second host needs the first's key
// file (--store-key); the folders hold no registrations; an unreachable
// store is exit 1 without the password.
func TestStoreSharedByTwoHosts(t *testing.T) {
	srv := pgtest.Start(t)
	t.Setenv(registrar.EnvStore, srv.NewDatabase(t))
	a, b := t.TempDir(), t.TempDir()
	if r := np(t, a, "register", "pve1", "--mac", "52:54:00:00:00:01", "--boot-disk", "sda"); r.code != 0 {
		t.Fatalf("register on host a: %d %s", r.code, r.err)
	}
	if r := np(t, a, "token", "create", "ci", "--scope", "read"); r.code != 0 {
		t.Fatalf("token create on host a: %d %s", r.code, r.err)
	}
	if _, err := os.Stat(filepath.Join(a, "registrations")); err == nil {
		t.Errorf("host a's state folder holds a registrations folder")
	}
	key := filepath.Join(a, store.KeyFileName)
	if r := np(t, b, "--store-key", key, "list"); r.code != 0 || !strings.Contains(r.stdout, "pve1") {
		t.Errorf("list on host b: %d %q %q; want pve1", r.code, r.stdout, r.err)
	}
	if r := np(t, b, "--store-key", key, "token", "list"); r.code != 0 || !strings.Contains(r.stdout, "ci") {
		t.Errorf("token list on host b: %d %q %q; want ci", r.code, r.stdout, r.err)
	}
	if r := np(t, b, "--store-key", key, "unregister", "pve1"); r.code != 0 {
		t.Errorf("unregister on host b: %d %s", r.code, r.err)
	}
	if r := np(t, a, "list"); r.code != 0 || strings.Contains(r.stdout, "pve1") {
		t.Errorf("list on host a after host b's unregister: %d %q; want no pve1", r.code, r.stdout)
	}
	t.Setenv(registrar.EnvStore, fmt.Sprintf("postgres://postgres:%s@127.0.0.1:1/np?sslmode=disable&connect_timeout=2", pgtest.Password))
	if r := np(t, a, "list"); r.code != 1 || !strings.Contains(r.err, "127.0.0.1:1") || strings.Contains(r.err, pgtest.Password) {
		t.Errorf("list with an unreachable store: exit %d %q; want 1 naming it without the password", r.code, r.err)
	}
}

// TestDiscoveryInboxSharedByTwoHosts: two state folders (two hosts) on
// one PostgreSQL store share one discovery inbox: a machine that host
// A's discovery window kept (its stores' inbox, as serve --discover
// keeps a post) is listed by host B's discovered and registered from it
// there, and listed by host A too; neither folder holds an inbox file.
func TestDiscoveryInboxSharedByTwoHosts(t *testing.T) {
	srv := pgtest.Start(t)
	conn := srv.NewDatabase(t)
	t.Setenv(registrar.EnvStore, conn)
	a, b := t.TempDir(), t.TempDir()
	st, err := store.Open(t.Context(), a, store.Options{Store: conn, Openers: postgres.Openers()})
	if err != nil {
		t.Fatal(err)
	}
	in, err := st.Discovered()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Put(context.Background(), discoveredMachine, time.Now()); err != nil {
		t.Fatal(err)
	}
	st.Close()

	r := np(t, b, "discovered", "-o", "json")
	var recs []discovery.Record
	if err := json.Unmarshal([]byte(r.stdout), &recs); err != nil || len(recs) != 1 || recs[0].ID != "52:54:00:aa:00:01" || recs[0].DMI.Serial != "DMI-SER-1" {
		t.Fatalf("discovered -o json on host b: exit %d %q %q (%v); want host a's machine", r.code, r.stdout, r.err, err)
	}
	if r := np(t, b, "register", "n1", "--from-discovered", "DMI-SER-1", "--boot-disk", "NVME-1"); r.code != 0 {
		t.Fatalf("register --from-discovered on host b: %d %s", r.code, r.err)
	}
	key := filepath.Join(b, store.KeyFileName)
	if r := np(t, a, "--store-key", key, "list"); r.code != 0 || !strings.Contains(r.stdout, "n1") {
		t.Errorf("list on host a: %d %q %q; want n1", r.code, r.stdout, r.err)
	}
	if r := np(t, a, "--store-key", key, "discovered"); r.code != 0 || !strings.Contains(r.stdout, "DMI-SER-1") {
		t.Errorf("discovered on host a: %d %q %q; want the machine", r.code, r.stdout, r.err)
	}
	for _, dir := range []string{a, b} {
		if _, err := os.Stat(filepath.Join(dir, folder.InboxFile)); err == nil {
			t.Errorf("%s holds %s: the inbox is the store's", dir, folder.InboxFile)
		}
	}
}
