package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// TestStoreCopy: store copy of a folder holding pending, consumed,
// undelivered and broken registrations, a root password, a token and a
// discovered machine
// leaves the database in the same state (pending stays pending, the
// undelivered one re-arms, the delivered one does not without --force),
// reports the broken one on its own line with exit 1 and copies it not;
// a second copy is refused, and the folder is unchanged.
func TestStoreCopy(t *testing.T) {
	srv := pgtest.Start(t)
	ctx := context.Background()
	src := t.TempDir()
	for _, args := range [][]string{
		{"register", "pending1", "--mac", "52:54:00:00:00:01", "--boot-disk", "sda"},
		{"register", "delivered1", "--mac", "52:54:00:00:00:02", "--boot-disk", "sda"},
		{"register", "undelivered1", "--mac", "52:54:00:00:00:03", "--boot-disk", "sda"},
		{"token", "create", "ci", "--scope", "read"},
	} {
		if r := np(t, src, args...); r.code != 0 {
			t.Fatalf("%v: %d %s", args, r.code, r.err)
		}
	}
	regs, err := folder.OpenRegistrations(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"delivered1", "undelivered1"} {
		if _, err := regs.Consume(ctx, n, registry.ConsumeRecord{ClientIP: "10.0.0.9", Undelivered: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := regs.MarkDelivered(ctx, "delivered1"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "registrations", "broken1.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	secrets := filepath.Join(src, "secrets")
	if err := os.MkdirAll(secrets, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(secrets, "delivered1.pw"), []byte("root-Pa55\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	discover(t, src, discoveredMachine)
	before := files(t, src)
	conn := srv.NewDatabase(t)
	t.Setenv(registrar.EnvStore, conn)

	r := np(t, src, "store", "copy", "--from", src)
	if r.code != 1 || !strings.Contains(r.stdout, "1 pending, 2 consumed (1 undelivered, re-armable), 1 secrets, 1 tokens") || !strings.Contains(r.stdout, "1 discovered machines") {
		t.Fatalf("store copy: exit %d\nstdout %s\nstderr %s; want exit 1 with the counts", r.code, r.stdout, r.err)
	}
	var brokenLines []string
	for _, l := range strings.Split(strings.TrimSpace(r.err), "\n") {
		if strings.Contains(l, "cannot be read, not copied") {
			brokenLines = append(brokenLines, l)
		}
	}
	if len(brokenLines) != 1 || !strings.Contains(brokenLines[0], "broken1") || strings.Contains(r.stdout+r.err, pgtest.Password) {
		t.Errorf("stderr %q: want one line naming broken1, no password", r.err)
	}
	if diff := cmp.Diff(before, without(files(t, src), store.KeyFileName)); diff != "" {
		t.Errorf("the folder changed (-before +after):\n%s", diff)
	}

	// Another host on the database: the same states.
	host := t.TempDir()
	key := filepath.Join(src, store.KeyFileName)
	r = np(t, host, "--store-key", key, "list", "-o", "json")
	var list []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("list -o json: %v\n%s\n%s", err, r.stdout, r.err)
	}
	got := map[string]any{}
	for _, n := range list {
		got[n["name"].(string)] = n["state"]
	}
	if diff := cmp.Diff(map[string]any{"pending1": "pending", "delivered1": "consumed", "undelivered1": "undelivered"}, got); diff != "" {
		t.Errorf("the database's registrations (-want +got):\n%s", diff)
	}
	if r := np(t, host, "--store-key", key, "rearm", "undelivered1"); r.code != 0 {
		t.Errorf("rearm of the undelivered one: %d %s", r.code, r.err)
	}
	if r := np(t, host, "--store-key", key, "rearm", "delivered1"); r.code == 0 {
		t.Errorf("rearm of the delivered one without --force: exit 0")
	}
	if r := np(t, host, "--store-key", key, "token", "list"); !strings.Contains(r.stdout, "ci") {
		t.Errorf("token list: %q", r.stdout)
	}
	if r := np(t, host, "--store-key", key, "discovered"); !strings.Contains(r.stdout, "DMI-SER-1") || !strings.Contains(r.stdout, "52:54:00:aa:00:01") {
		t.Errorf("discovered on the database: %d %q %q; want the folder's machine", r.code, r.stdout, r.err)
	}
	st, err := store.Open(t.Context(), host, store.Options{Store: conn, KeyFile: key, Openers: postgres.Openers()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sec, err := st.Secrets(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if pw, err := sec.(*postgres.Secrets).ReadRootPassword(ctx, "delivered1"); err != nil || pw != "root-Pa55" {
		t.Errorf("the copied root password = %q, %v", pw, err)
	}

	if r := np(t, src, "store", "copy", "--from", src); r.code != 1 || !strings.Contains(r.err, "already holds state") {
		t.Errorf("a second copy: exit %d %q; want 1, refused", r.code, r.err)
	}
	if r := np(t, src, "store", "copy", "--from", src, "--to", "postgres://np:hunter2@db/np"); r.code != 2 || strings.Contains(r.err, "hunter2") {
		t.Errorf("--to with a password: exit %d %q; want 2 without it", r.code, r.err)
	}
}

func without(list []string, name string) []string {
	var out []string
	for _, f := range list {
		if f != name {
			out = append(out, f)
		}
	}
	return out
}
