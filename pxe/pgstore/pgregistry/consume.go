package pgregistry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/plasmactl/plasma-node/pxe/registry"
)

// Consume marks the pending registration name served, once, with rec:
// in one transaction it deletes the pending row (the one step any number
// of racing consumers, on any host, cannot all take: the others find no
// row) and writes the consumed record. The losers get an error wrapping
// [registry.ErrAlreadyConsumed], or [registry.ErrNotFound] for a name
// never registered or deleted.
func (s *Store) Consume(ctx context.Context, name string, rec registry.ConsumeRecord) (registry.Registration, error) {
	if err := registry.ValidateName(name); err != nil {
		return registry.Registration{}, err
	}
	if rec.Time.IsZero() {
		rec.Time = time.Now().UTC()
	}
	if len(rec.MACs) == 0 {
		rec.MACs = nil
	}
	var r registry.Registration
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.db.Pool, func(tx pgx.Tx) error {
		var data string
		err := tx.QueryRow(ctx, "DELETE FROM np_registrations_pending WHERE name = $1 RETURNING data", name).Scan(&data)
		if errors.Is(err, pgx.ErrNoRows) {
			var one int
			switch err := tx.QueryRow(ctx, "SELECT 1 FROM np_registrations_consumed WHERE name = $1", name).Scan(&one); {
			case err == nil:
				return registry.ErrAlreadyConsumed
			case errors.Is(err, pgx.ErrNoRows):
				return fmt.Errorf("%w named %q", registry.ErrNotFound, name)
			default:
				return err
			}
		}
		if err != nil {
			return err
		}
		if r, err = decode(data, name); err != nil {
			return err
		}
		r.Consumed = &rec
		enc, err := encode(r)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO np_registrations_consumed (name, data) VALUES ($1, $2)
			ON CONFLICT (name) DO UPDATE SET data = EXCLUDED.data`, name, string(enc))
		return err
	})
	if err != nil {
		return registry.Registration{}, fmt.Errorf("consume registration %s: %w", name, s.db.Check(err))
	}
	s.log.Info("registration consumed", "node", name, "client_ip", rec.ClientIP)
	return r, nil
}

// MarkDelivered clears the consumed registration's Undelivered.
func (s *Store) MarkDelivered(ctx context.Context, name string) error {
	if err := registry.ValidateName(name); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, s.db.Pool, func(tx pgx.Tx) error {
		r, err := lockConsumed(ctx, tx, name)
		if err != nil {
			return err
		}
		r.Consumed.Undelivered = false
		enc, err := encode(r)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "UPDATE np_registrations_consumed SET data = $2 WHERE name = $1", name, string(enc))
		return err
	})
	if err != nil {
		return fmt.Errorf("mark delivered %s: %w", name, s.db.Check(err))
	}
	return nil
}

func lockConsumed(ctx context.Context, tx pgx.Tx, name string) (registry.Registration, error) {
	var data string
	err := tx.QueryRow(ctx, "SELECT data FROM np_registrations_consumed WHERE name = $1 FOR UPDATE", name).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return registry.Registration{}, fmt.Errorf("%w named %q was consumed", registry.ErrNotFound, name)
	}
	if err != nil {
		return registry.Registration{}, err
	}
	r, err := decode(data, name)
	if err != nil {
		return r, err
	}
	if r.Consumed == nil {
		r.Consumed = &registry.ConsumeRecord{}
	}
	return r, nil
}

// Rearm puts the consumed registration name back to pending: only when
// its answer was not seen delivered (else an error wrapping
// [registry.ErrDelivered]), unless force. A pending registration of the
// name is refused ([registry.ErrInvalidRegistration]), and so is a pin
// another pending registration took meanwhile ([*registry.PinTakenError]).
func (s *Store) Rearm(ctx context.Context, name string, force bool) error {
	if err := registry.ValidateName(name); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, s.db.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('np-registration:' || $1, 0))", name); err != nil {
			return err
		}
		r, err := lockConsumed(ctx, tx, name)
		if err != nil {
			return err
		}
		if !r.Consumed.Undelivered && !force {
			return fmt.Errorf("%w at %s; register it again to reinstall", registry.ErrDelivered, r.Consumed.Time.UTC().Format(time.RFC3339))
		}
		r.Consumed = nil
		enc, err := encode(r)
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, "INSERT INTO np_registrations_pending (name, data) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING", name, string(enc))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("%w: a pending registration of that name exists", registry.ErrInvalidRegistration)
		}
		holders, err := pinHolders(ctx, tx, name, r.Pins())
		if err != nil {
			return err
		}
		if len(holders) > 0 {
			return &registry.PinTakenError{Name: name, Pin: holders[0].taken[0], Holder: holders[0].name}
		}
		if err := insertPins(ctx, tx, name, r.Pins()); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "DELETE FROM np_registrations_consumed WHERE name = $1", name)
		return err
	})
	if err != nil {
		return fmt.Errorf("rearm %s: %w", name, s.db.Check(err))
	}
	s.log.Info("registration re-armed", "node", name)
	return nil
}
