package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"
)

// TestOpenPostgres: with a postgres:// store, store.Open gives the PostgreSQL
// stores (a second host's Open sees what the first wrote), makes the
// secrets key in the state folder (0600) on the first host and refuses
// a second host without it naming the file; the state folder keeps no
// registrations; a store that cannot be reached or another scheme is
// refused, and no error holds the password.
func TestOpenPostgres(t *testing.T) {
	srv := pgtest.Start(t)
	ctx := context.Background()
	conn := srv.NewDatabase(t)
	dirA, dirB := t.TempDir(), t.TempDir()
	a, err := store.Open(t.Context(), dirA, store.Options{Openers: postgres.Openers(), Store: conn})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, ok := a.Registrations().(*postgres.Registrations); !ok {
		t.Fatalf("Registrations = %T, want *Registrations", a.Registrations())
	}
	secA, err := a.Secrets(t.Context())
	if _, ok := secA.(*postgres.Secrets); err != nil || !ok {
		t.Fatalf("Secrets = %T, %v; want *Secrets", secA, err)
	}
	if fi, err := os.Stat(filepath.Join(dirA, store.KeyFileName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the key file: %v, %v; want <state-dir>/%s, 0600", fi, err, store.KeyFileName)
	}
	toks, _ := a.Tokens()
	ins, _ := a.Installs()
	if _, ok := toks.(*postgres.Tokens); !ok {
		t.Errorf("Tokens = %T, want *Tokens", toks)
	}
	if _, ok := ins.(*postgres.Installs); !ok {
		t.Errorf("Installs = %T, want *Installs", ins)
	}
	if _, ok := a.Events().(*postgres.Events); !ok {
		t.Errorf("Events = %T, want *Events", a.Events())
	}
	if in, err := a.Discovered(); err != nil {
		t.Errorf("Discovered: %v", err)
	} else if _, ok := in.(*postgres.Inbox); !ok {
		t.Errorf("Discovered = %T, want *Inbox", in)
	}
	if a.Remote() == nil || strings.Contains(a.Store(), pgtest.Password) || !strings.Contains(a.Store(), "xxxxx") {
		t.Errorf("Store() = %q, want the URL without its password", a.Store())
	}
	reg := registry.Registration{Name: "node1", MACs: []string{"52:54:00:00:00:01"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}}
	if _, err := a.Registrations().Register(ctx, reg, registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := secA.WriteBMCPassword(ctx, "node1", "bmc-Pa55"); err != nil {
		t.Fatal(err)
	}
	if err := a.Events().Append(ctx, events.Event{Kind: events.Answer, Node: "node1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := toks.Create(ctx, "ci", apitoken.ScopeRead, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dirA); len(ents) != 1 {
		t.Errorf("the state folder holds %d entries, want the key file only", len(ents))
	}

	// A second host without the key file is refused naming it.
	b, err := store.Open(t.Context(), dirB, store.Options{Openers: postgres.Openers(), Store: conn})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Secrets(t.Context()); !errors.Is(err, postgres.ErrNoKey) || !strings.Contains(err.Error(), filepath.Join(dirB, store.KeyFileName)) {
		t.Errorf("a second host's Secrets without the key = %v, want ErrNoKey naming its key file", err)
	}
	key, _ := os.ReadFile(filepath.Join(dirA, store.KeyFileName))
	keyB := filepath.Join(t.TempDir(), "copied.key")
	if err := os.WriteFile(keyB, key, 0o600); err != nil {
		t.Fatal(err)
	}
	b2, err := store.Open(t.Context(), dirB, store.Options{Openers: postgres.Openers(), Store: conn, KeyFile: keyB})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if got, err := registry.Pending(ctx, b2.Registrations()); err != nil || len(got) != 1 {
		t.Errorf("the second host's pending = %v, %v; want node1", got, err)
	}
	if sec, err := b2.Secrets(t.Context()); err != nil {
		t.Errorf("the second host's Secrets with the copied key: %v", err)
	} else if pw, err := sec.ReadBMCPassword(ctx, "node1"); err != nil || pw != "bmc-Pa55" {
		t.Errorf("the second host reads %q, %v", pw, err)
	}
	if recs, err := b2.Events().Read(ctx, "", 0); err != nil || len(recs) != 1 {
		t.Errorf("the second host's events = %v, %v; want the first's", recs, err)
	}

	bad := []struct {
		store string
		want  error
	}{
		{store: fmt.Sprintf("postgres://postgres:%s@127.0.0.1:1/x?sslmode=disable&connect_timeout=2", pgtest.Password), want: postgres.ErrConnect},
		{store: fmt.Sprintf("mysql://root:%s@db/x", pgtest.Password), want: store.ErrUnknownScheme},
	}
	for _, tc := range bad {
		_, err := store.Open(t.Context(), t.TempDir(), store.Options{Openers: postgres.Openers(), Store: tc.store, Timeout: 3 * time.Second})
		if !errors.Is(err, tc.want) || strings.Contains(err.Error(), pgtest.Password) {
			t.Errorf("Open with store %s = %v; want %v without the password", postgres.Redact(tc.store), err, tc.want)
		}
	}
}
