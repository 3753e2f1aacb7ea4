package postgres

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/internal/pgtest"
)

// keyRefusals: a missing key file, one others may read, one that is not
// a key and another key than the store's are each a KeyError naming the
// file, with its own sentinel; none opens the store.
func keyRefusals(t *testing.T, srv *pgtest.Server) {
	ctx := context.Background()
	db := openDB(t, srv.NewDatabase(t))
	dir := t.TempDir()
	good := filepath.Join(dir, "store.key")
	if _, err := OpenSecrets(ctx, db, good, SecretsOptions{Create: true}); err != nil {
		t.Fatal(err)
	}
	write := func(name, data string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		return p
	}
	other, err := CreateKey(filepath.Join(dir, "other.key"))
	if err != nil {
		t.Fatal(err)
	}
	goodText, _ := os.ReadFile(good)
	tests := map[string]struct {
		file   string
		create bool
		want   error
		says   string
	}{
		"a missing key file":                         {file: filepath.Join(dir, "missing.key"), want: ErrNoKey},
		"a missing key file, once the store has one": {file: filepath.Join(dir, "missing2.key"), create: true, want: ErrNoKey},
		"a key file others may read":                 {file: write("open.key", string(goodText), 0o644), want: ErrKeyMode, says: "0644"},
		"a key file group may read":                  {file: write("group.key", string(goodText), 0o640), want: ErrKeyMode, says: "0640"},
		"a key file that is not base64":              {file: write("text.key", "not a key at all\n", 0o600), want: ErrBadKey},
		"a key of 16 bytes":                          {file: write("short.key", "AAAAAAAAAAAAAAAAAAAAAA==\n", 0o600), want: ErrBadKey},
		"an empty key file":                          {file: write("empty.key", "", 0o600), want: ErrBadKey},
		"a folder in the key's place":                {file: dir, want: ErrBadKey, says: "not a regular file"},
		"another key than the store's":               {file: other.File, want: ErrWrongKey, says: other.ID},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, err := OpenSecrets(ctx, db, tc.file, SecretsOptions{Create: tc.create})
			var ke *KeyError
			if s != nil || !errors.Is(err, tc.want) || !errors.Is(err, ErrKey) || !errors.As(err, &ke) || ke.File != tc.file {
				t.Fatalf("OpenSecrets = %v, %v; want a KeyError of %s matching %v", s, err, tc.file, tc.want)
			}
			if !strings.Contains(err.Error(), tc.file) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("the refusal %q does not name the file %s and %q", err, tc.file, tc.says)
			}
			if strings.Contains(err.Error(), strings.TrimSpace(string(goodText))) {
				t.Errorf("the refusal quotes the key")
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "missing2.key")); err == nil {
		t.Errorf("a key file was made for a store that has a key")
	}
}

// wrongKeyNoPlaintext: rows read with another key, a row whose key id
// was forged to the reader's, and a sealed password moved to another
// node's row each give an ErrWrongKey, never a password.
func wrongKeyNoPlaintext(t *testing.T, srv *pgtest.Server) {
	ctx := context.Background()
	db := openDB(t, srv.NewDatabase(t))
	dir := t.TempDir()
	s, err := OpenSecrets(ctx, db, filepath.Join(dir, "store.key"), SecretsOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	const pw = "the-real-bmc-Pa55"
	if _, err := s.WriteBMCPassword(ctx, "node1", pw); err != nil {
		t.Fatal(err)
	}
	otherKey, err := CreateKey(filepath.Join(dir, "other.key"))
	if err != nil {
		t.Fatal(err)
	}
	// Another key's store, past OpenSecrets's check, as a bug or a hand-made
	// row would give.
	wrong, err := newSecrets(db, otherKey)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, s *Secrets, name string) {
		t.Helper()
		got, err := s.ReadBMCPassword(ctx, name)
		if got != "" || !errors.Is(err, ErrWrongKey) {
			t.Errorf("%s: ReadBMCPassword = %q, %v; want no password and ErrWrongKey", what, got, err)
		}
		if err != nil && strings.Contains(err.Error(), pw) {
			t.Errorf("%s: the error quotes the password", what)
		}
	}
	check("another key", wrong, "node1")
	if _, err := db.Pool.Exec(ctx, "UPDATE np_secrets SET key_id = $1", otherKey.ID); err != nil {
		t.Fatal(err)
	}
	check("a key id forged to the reader's", wrong, "node1")
	if _, err := db.Pool.Exec(ctx, "UPDATE np_secrets SET key_id = $1", s.KeyID()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO np_secrets (kind, name, key_id, sealed)
		SELECT kind, 'node2', key_id, sealed FROM np_secrets WHERE name = 'node1'`); err != nil {
		t.Fatal(err)
	}
	check("a sealed password moved to another row", s, "node2")
	if _, err := db.Pool.Exec(ctx, "UPDATE np_secrets SET sealed = overlay(sealed placing '\\x00'::bytea from 20 for 1) WHERE name = 'node1'"); err != nil {
		t.Fatal(err)
	}
	check("a sealed password altered", s, "node1")
}

// twoHosts: two hosts with a copy of one key file read each other's
// secrets.
func twoHosts(t *testing.T, srv *pgtest.Server) {
	ctx := context.Background()
	conn := srv.NewDatabase(t)
	dir := t.TempDir()
	a, err := OpenSecrets(ctx, openDB(t, conn), filepath.Join(dir, "a.key"), SecretsOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "a.key"))
	if err := os.WriteFile(filepath.Join(dir, "b.key"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := OpenSecrets(ctx, openDB(t, conn), filepath.Join(dir, "b.key"), SecretsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.WriteBMCPassword(ctx, "node1", "shared-Pa55"); err != nil {
		t.Fatal(err)
	}
	if pw, err := b.ReadBMCPassword(ctx, "node1"); err != nil || pw != "shared-Pa55" {
		t.Errorf("the other host reads %q, %v; want shared-Pa55", pw, err)
	}
	if err := b.RemoveBMCPassword(ctx, "node1"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ReadBMCPassword(ctx, "node1"); !errors.Is(err, errNotExist) {
		t.Errorf("after the other host removed it ReadBMCPassword = %v, want none", err)
	}
}
