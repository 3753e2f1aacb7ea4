package postgres

import (
	"context"
	"fmt"
)

// stateTables are the tables that hold a site's state, in the order
// [DB.Holds] names them.
var stateTables = []struct{ table, what string }{
	{"np_registrations_pending", "pending registrations"},
	{"np_registrations_consumed", "consumed registrations"},
	{"np_secrets", "secrets"},
	{"np_tokens", "API tokens"},
	{"np_events", "events"},
	{"np_installs", "install reports"},
	{"np_replies", "idempotency records"},
	{"np_discovered", "discovered machines"},
}

// Holds returns what state the database holds ("3 pending
// registrations", …), none for a new one.
func (db *DB) Holds(ctx context.Context) ([]string, error) {
	ctx, cancel := db.Bound(ctx)
	defer cancel()
	var out []string
	for _, t := range stateTables {
		var n int64
		if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM "+t.table).Scan(&n); err != nil {
			return nil, fmt.Errorf("PostgreSQL store %s: %w", db.name, db.Check(err))
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("%d %s", n, t.what))
		}
	}
	return out, nil
}

// ImportReply keeps an idempotency record as a folder keeps it: keyHash
// is the hex SHA-256 of its key, data its JSON, at its time.
func (db *DB) ImportReply(ctx context.Context, keyHash, data string, at any) error {
	ctx, cancel := db.Bound(ctx)
	defer cancel()
	if _, err := db.Pool.Exec(ctx, "INSERT INTO np_replies (key_hash, data, at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", keyHash, data, at); err != nil {
		return fmt.Errorf("import idempotency record: %w", db.Check(err))
	}
	return nil
}
