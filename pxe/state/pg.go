package state

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/plasmactl/plasma-node/pxe/pgstore"
	"github.com/plasmactl/plasma-node/pxe/pgstore/pgdiscovery"
	"github.com/plasmactl/plasma-node/pxe/pgstore/pgevents"
	"github.com/plasmactl/plasma-node/pxe/pgstore/pginstalls"
	"github.com/plasmactl/plasma-node/pxe/pgstore/pgregistry"
	"github.com/plasmactl/plasma-node/pxe/pgstore/pgsecret"
	"github.com/plasmactl/plasma-node/pxe/pgstore/pgtokens"
	"github.com/plasmactl/plasma-node/pxe/pgstore/pgwindow"
)

// KeyFileName is the secrets key's file in the state folder when
// [Options].KeyFile is empty.
const KeyFileName = "store.key"

// IsPostgres reports whether setting is a PostgreSQL connection URL
// (postgres:// or postgresql://).
func IsPostgres(setting string) bool {
	m := schemeRE.FindStringSubmatch(setting)
	if m == nil {
		return false
	}
	s := strings.ToLower(m[1])
	return s == "postgres" || s == "postgresql"
}

// openPostgres opens the PostgreSQL store of o.Store for s: its
// registrations at once, the other stores when first asked for.
func (s *Stores) openPostgres() error {
	db, err := pgstore.Open(context.Background(), s.opts.Store, pgstore.Options{Timeout: s.opts.Timeout, Logger: s.opts.Logger})
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	s.db = db
	s.regs = pgregistry.Open(db, s.opts.Logger)
	return nil
}

// keyFile is the secrets key's file: [Options].KeyFile, else
// <state-dir>/store.key.
func (s *Stores) keyFile() string {
	if s.opts.KeyFile != "" {
		return s.opts.KeyFile
	}
	return filepath.Join(s.dir, KeyFileName)
}

// pgSecrets opens the secrets sealed with the host's key; the store's
// first host makes the key file.
func (s *Stores) pgSecrets() (*pgsecret.Store, error) {
	return pgsecret.Open(context.Background(), s.db, s.keyFile(), pgsecret.Options{Create: true})
}

func (s *Stores) pgEvents() *pgevents.Store     { return pgevents.Open(s.db, pgevents.Options{}) }
func (s *Stores) pgInstalls() *pginstalls.Store { return pginstalls.Open(s.db) }
func (s *Stores) pgSiteWindow() *pgwindow.Store { return pgwindow.Open(s.db) }
func (s *Stores) pgTokens() *pgtokens.Store     { return pgtokens.Open(s.db, s.opts.Logger) }
func (s *Stores) pgDiscovered() *pgdiscovery.Store {
	return pgdiscovery.Open(s.db, s.opts.Discovery)
}

// Postgres returns the PostgreSQL store, nil for the state folder's: the
// daemon opens the API's idempotency records on it (package pgreplies,
// which takes the API's types, so pxe/state cannot open it).
func (s *Stores) Postgres() *pgstore.DB { return s.db }

// Store names the stores in messages: the state folder, or the
// PostgreSQL store without its password.
func (s *Stores) Store() string {
	if s.db != nil {
		return s.db.Name()
	}
	return s.dir
}

// Close closes the PostgreSQL store's connections; a state folder's
// stores hold none.
func (s *Stores) Close() {
	if s.db != nil {
		s.db.Close()
	}
}
