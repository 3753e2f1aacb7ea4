package pgregistry

import (
	"context"
	"fmt"

	"github.com/plasmactl/plasma-node/pxe/registry"
)

// Import writes r as it is, for copying a folder's registrations into
// the store: a pending one as [Store.Register] does (its pins taken), a
// consumed one (Consumed set, its Undelivered kept, so it stays
// re-armable) as its consumed record. A consumed record of the name is
// replaced.
func (s *Store) Import(ctx context.Context, r registry.Registration) error {
	if r.Consumed == nil {
		_, err := s.Register(ctx, r, registry.RegisterOptions{})
		return err
	}
	if err := registry.ValidateName(r.Name); err != nil {
		return err
	}
	data, err := encode(r)
	if err != nil {
		return err
	}
	if _, err := s.db.Pool.Exec(ctx, `INSERT INTO np_registrations_consumed (name, data) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET data = EXCLUDED.data`, r.Name, string(data)); err != nil {
		return fmt.Errorf("import consumed registration %s: %w", r.Name, s.db.Check(err))
	}
	return nil
}
