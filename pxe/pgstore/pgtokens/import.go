package pgtokens

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/plasmactl/plasma-node/pxe/apitoken"
)

// Import keeps t (a token's hash, never a token) as it is, for copying
// a folder's tokens into the store; a name taken is [apitoken.ErrExists].
func (s *Store) Import(ctx context.Context, t apitoken.Token) error {
	if err := apitoken.CheckName(t.Name); err != nil {
		return err
	}
	used := t.LastUsed
	t.LastUsed = used.UTC()
	data, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("api tokens: %w", err)
	}
	var last any
	if !used.IsZero() {
		last = used
	}
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	tag, err := s.db.Pool.Exec(ctx, "INSERT INTO np_tokens (name, hash, data, last_used) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING", t.Name, t.Hash, string(data), last)
	if err != nil {
		return fmt.Errorf("api tokens: import %s: %w", t.Name, s.db.Check(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: %q", apitoken.ErrExists, t.Name)
	}
	return nil
}
