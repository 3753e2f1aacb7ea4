package postgres

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/secret"
	"github.com/plasmactl/plasma-node/pxe/secret/secrettest"
)

func openDB(t testing.TB, conn string) *DB {
	t.Helper()
	db, err := OpenDB(context.Background(), conn, DBOptions{})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(db.Close)
	return db
}

// kept returns the store's rows opened with its key (what it keeps, as
// the suite looks for it: a store whose rows cannot be opened fails its
// checks), each private to the database's owner, and its key file.
func kept(t secrettest.T, s *Secrets) []secrettest.Kept {
	rows, err := s.db.Pool.Query(context.Background(), "SELECT kind, name, key_id, sealed FROM np_secrets")
	if err != nil {
		t.Fatalf("kept: %v", err)
	}
	defer rows.Close()
	var out []secrettest.Kept
	for rows.Next() {
		var kind, name, keyID string
		var sealed []byte
		if err := rows.Scan(&kind, &name, &keyID, &sealed); err != nil {
			t.Fatalf("kept: %v", err)
		}
		pw, err := s.open(kind, name, keyID, sealed)
		if err != nil {
			t.Errorf("a kept secret does not open: %v", err)
		}
		out = append(out, secrettest.Kept{Where: secretWhere(kind, name), Mode: 0o600, Data: []byte(pw)})
	}
	fi, err := os.Stat(s.key.File)
	if err != nil {
		t.Fatalf("kept: %v", err)
	}
	data, _ := os.ReadFile(s.key.File)
	return append(out, secrettest.Kept{Where: s.key.File, Mode: fi.Mode().Perm(), Data: data})
}

// openSecrets opens a Secrets store on a new database of srv with a new
// key file.
func openSecrets(st secrettest.T, srv *pgtest.Server) *Secrets {
	tb := st.(testing.TB)
	s, err := OpenSecrets(context.Background(), openDB(tb, srv.NewDatabase(tb)), filepath.Join(tb.TempDir(), "store.key"), SecretsOptions{Create: true})
	if err != nil {
		st.Fatalf("open: %v", err)
	}
	return s
}

// pgHarness is a suite's harness of Secrets stores on srv, one database
// and key file per check, as the contract S the suite checks.
func pgHarness[S comparable](srv *pgtest.Server, as func(*Secrets) S) secrettest.Harness[S] {
	var mu sync.Mutex
	stores := map[S]*Secrets{}
	return secrettest.Harness[S]{
		New: func(st secrettest.T) S {
			s := openSecrets(st, srv)
			mu.Lock()
			defer mu.Unlock()
			stores[as(s)] = s
			return as(s)
		},
		Kept: func(t secrettest.T, s S) []secrettest.Kept {
			mu.Lock()
			defer mu.Unlock()
			return kept(t, stores[s])
		},
	}
}

// TestSecretsConformance runs the secrets' suite on a real PostgreSQL,
// a database and a key file per check, then the checks of the key.
func TestSecretsConformance(t *testing.T) {
	t.Parallel()
	srv := pgtest.Start(t)
	secrettest.Run(t, pgHarness(srv, func(s *Secrets) secret.Store { return s }))
	t.Run("SealedAtRestKeyNotInTheDatabase", func(t *testing.T) { sealedAtRest(t, srv) })
	t.Run("KeyRefusals", func(t *testing.T) { keyRefusals(t, srv) })
	t.Run("AWrongKeyNeverYieldsPlaintext", func(t *testing.T) { wrongKeyNoPlaintext(t, srv) })
	t.Run("TwoHostsOneKey", func(t *testing.T) { twoHosts(t, srv) })
}

// sealedAtRest: no password, nor the key, is anywhere in the database's
// rows of secrets.
func sealedAtRest(t *testing.T, srv *pgtest.Server) {
	ctx := t.Context()
	db := openDB(t, srv.NewDatabase(t))
	keyFile := filepath.Join(t.TempDir(), "store.key")
	s, err := OpenSecrets(context.Background(), db, keyFile, SecretsOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the key file made: %v, %v; want mode 0600", fi, err)
	}
	if _, err := s.WriteBMCPassword(ctx, "node1", "bmc-plain-Pa55"); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteRootPassword(ctx, "node1", "root-plain-Pa55"); err != nil {
		t.Fatal(err)
	}
	if err := s.KeepPrevious(ctx, "node1"); err != nil {
		t.Fatal(err)
	}
	var dump string
	if err := db.Pool.QueryRow(context.Background(), `SELECT string_agg(x, ' ') FROM (
		SELECT s::text || encode(sealed, 'escape') AS x FROM np_secrets s UNION ALL SELECT k::text FROM np_secret_key k) q`).Scan(&dump); err != nil {
		t.Fatal(err)
	}
	keyText, _ := os.ReadFile(keyFile)
	for _, secretText := range []string{"bmc-plain-Pa55", "root-plain-Pa55", "plain-Pa55", strings.TrimSpace(string(keyText)), string(s.key.raw[:8])} {
		if strings.Contains(dump, secretText) {
			t.Errorf("the database holds %.12q…", secretText)
		}
	}
	if !strings.Contains(dump, s.KeyID()) {
		t.Errorf("the database does not hold the key's id %s", s.KeyID())
	}
	for name, read := range map[string]func(context.Context, string) (string, error){"root": s.ReadRootPassword, "previous": s.ReadPreviousPassword, "bmc": s.ReadBMCPassword} {
		if pw, err := read(ctx, "node1"); err != nil || !strings.HasSuffix(pw, "-plain-Pa55") {
			t.Errorf("read %s = %q, %v", name, pw, err)
		}
	}
}

var errNotExist = fs.ErrNotExist
