package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/plasmactl/plasma-node/internal/hostname"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// Registrations keeps node-provisioner's registrations
// ([registry.Registrations]) in PostgreSQL, for sites whose provisioner
// hosts share one store; safe for concurrent use, also by several
// processes and hosts on one database.
//
// A pending registration is a row; its pins (MACs, serial, UUID) are
// rows of a table with a UNIQUE constraint, so two pending registrations
// can never pin one machine, whichever host writes them. Consume is one
// transaction whose DELETE of the pending row is the arbiter: of any
// number of consumers racing on any number of hosts exactly one deletes
// the row, the others find it gone. A consumer killed before its commit
// leaves the registration pending; one killed after leaves it consumed,
// undelivered, to be re-armed.
type Registrations struct {
	db  *DB
	log *slog.Logger
}

var _ registry.Registrations = (*Registrations)(nil)

// OpenRegistrations returns the registrations of db; log may be nil (db's then).
func OpenRegistrations(db *DB, log *slog.Logger) *Registrations {
	if log == nil {
		log = db.Log
	}
	return &Registrations{db: db, log: log}
}

// registrationWhere names a row of the store in messages and [registry.Broken].
func registrationWhere(table, name string) string { return "postgres " + table + " " + name }

// Get returns the pending registration name.
func (s *Registrations) Get(ctx context.Context, name string) (registry.Registration, error) {
	if err := registry.ValidateName(name); err != nil {
		return registry.Registration{}, err
	}
	var data string
	err := s.db.Pool.QueryRow(ctx, "SELECT data FROM np_registrations_pending WHERE name = $1", name).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return registry.Registration{}, fmt.Errorf("%w named %q", registry.ErrNotFound, name)
	}
	if err != nil {
		return registry.Registration{}, fmt.Errorf("get registration %s: %w", name, s.db.Check(err))
	}
	return decodeRegistration(data, name)
}

// Delete removes the pending registration name (and so its pins); a
// consumed record stays.
func (s *Registrations) Delete(ctx context.Context, name string) error {
	if err := registry.ValidateName(name); err != nil {
		return err
	}
	tag, err := s.db.Pool.Exec(ctx, "DELETE FROM np_registrations_pending WHERE name = $1", name)
	if err != nil {
		return fmt.Errorf("delete registration %s: %w", name, s.db.Check(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w named %q", registry.ErrNotFound, name)
	}
	s.log.Info("registration deleted", "node", name)
	return nil
}

// Scan returns the pending registrations sorted by name, and the rows
// that cannot be decoded (written by another binary, or by hand).
func (s *Registrations) Scan(ctx context.Context) ([]registry.Registration, []registry.Broken, error) {
	return s.list(ctx, "np_registrations_pending")
}

// Consumed returns the consumed registrations sorted by name, each with
// Consumed set.
func (s *Registrations) Consumed(ctx context.Context) ([]registry.Registration, error) {
	rs, _, err := s.list(ctx, "np_registrations_consumed")
	for i := range rs {
		if rs[i].Consumed == nil {
			rs[i].Consumed = &registry.ConsumeRecord{}
		}
	}
	return rs, err
}

func (s *Registrations) list(ctx context.Context, table string) ([]registry.Registration, []registry.Broken, error) {
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	rows, err := s.db.Pool.Query(ctx, "SELECT name, data FROM "+table)
	if err != nil {
		return nil, nil, fmt.Errorf("list registrations: %w", s.db.Check(err))
	}
	type row struct{ name, data string }
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		return x, r.Scan(&x.name, &x.data)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("list registrations: %w", s.db.Check(err))
	}
	var out []registry.Registration
	var broken []registry.Broken
	for _, x := range all {
		r, err := decodeRegistration(x.data, x.name)
		if err != nil {
			s.log.Warn("registration cannot be read", "row", registrationWhere(table, x.name), "err", err)
			broken = append(broken, registry.Broken{Name: x.name, File: registrationWhere(table, x.name), Err: err})
			continue
		}
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return hostname.Compare(out[i].Name, out[j].Name) < 0 })
	sort.Slice(broken, func(i, j int) bool { return broken[i].Name < broken[j].Name })
	return out, broken, nil
}

// encodeRegistration returns a registration's stored form: the registration file's
// JSON, indented as the folder store writes it.
func encodeRegistration(r registry.Registration) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("encode registration %s: %w", r.Name, err)
	}
	return buf.Bytes(), nil
}

func decodeRegistration(data, name string) (registry.Registration, error) {
	r, err := registry.DecodeRegistration([]byte(data), name)
	if err != nil {
		return registry.Registration{}, fmt.Errorf("read registration %s: %w", registrationWhere("registration", name), err)
	}
	return r, nil
}

// retryable says a transaction lost a race it can run again after:
// a unique pin taken meanwhile, a deadlock, a serialisation failure.
func retryable(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "23505", "40P01", "40001":
		return true
	}
	return false
}

// inTx runs f in a transaction, again (a few times) when it lost a race.
func (s *Registrations) inTx(ctx context.Context, f func(tx pgx.Tx) error) error {
	var err error
	for range 20 {
		err = pgx.BeginFunc(ctx, s.db.Pool, f)
		if !retryable(err) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// Consume marks the pending registration name served, once, with rec:
// in one transaction it deletes the pending row (the one step any number
// of racing consumers, on any host, cannot all take: the others find no
// row) and writes the consumed record. The losers get an error wrapping
// [registry.ErrAlreadyConsumed], or [registry.ErrNotFound] for a name
// never registered or deleted.
func (s *Registrations) Consume(ctx context.Context, name string, rec registry.ConsumeRecord) (registry.Registration, error) {
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
		if r, err = decodeRegistration(data, name); err != nil {
			return err
		}
		r.Consumed = &rec
		enc, err := encodeRegistration(r)
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
func (s *Registrations) MarkDelivered(ctx context.Context, name string) error {
	if err := registry.ValidateName(name); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, s.db.Pool, func(tx pgx.Tx) error {
		r, err := lockConsumed(ctx, tx, name, "mark delivered")
		if err != nil {
			return err
		}
		r.Consumed.Undelivered = false
		enc, err := encodeRegistration(r)
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

func lockConsumed(ctx context.Context, tx pgx.Tx, name, op string) (registry.Registration, error) {
	var data string
	err := tx.QueryRow(ctx, "SELECT data FROM np_registrations_consumed WHERE name = $1 FOR UPDATE", name).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		var one int
		perr := tx.QueryRow(ctx, "SELECT 1 FROM np_registrations_pending WHERE name = $1", name).Scan(&one)
		return registry.Registration{}, registry.NotConsumed(name, perr == nil, op)
	}
	if err != nil {
		return registry.Registration{}, err
	}
	r, err := decodeRegistration(data, name)
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
// [registry.ErrDelivered]), unless o.Force, and with o.WipeData as its
// WipeData. A pending registration of the
// name is refused ([registry.ErrInvalidRegistration]), and so is a pin
// another pending registration took meanwhile ([*registry.PinTakenError]).
func (s *Registrations) Rearm(ctx context.Context, name string, o registry.RearmOptions) error {
	if err := registry.ValidateName(name); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, s.db.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('np-registration:' || $1, 0))", name); err != nil {
			return err
		}
		r, err := lockConsumed(ctx, tx, name, "re-arm")
		if err != nil {
			return err
		}
		if !r.Consumed.Undelivered && !o.Force {
			return fmt.Errorf("%w at %s; register it again to reinstall", registry.ErrDelivered, r.Consumed.Time.UTC().Format(time.RFC3339))
		}
		r.Consumed = nil
		r.WipeData = o.WipeData
		enc, err := encodeRegistration(r)
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

// Import writes r as it is, for copying a folder's registrations into
// the store: a pending one as [Registrations.Register] does (its pins taken), a
// consumed one (Consumed set, its Undelivered kept, so it stays
// re-armable) as its consumed record. A consumed record of the name is
// replaced.
func (s *Registrations) Import(ctx context.Context, r registry.Registration) error {
	if r.Consumed == nil {
		_, err := s.Register(ctx, r, registry.RegisterOptions{})
		return err
	}
	if err := registry.ValidateName(r.Name); err != nil {
		return err
	}
	data, err := encodeRegistration(r)
	if err != nil {
		return err
	}
	if _, err := s.db.Pool.Exec(ctx, `INSERT INTO np_registrations_consumed (name, data) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET data = EXCLUDED.data`, r.Name, string(data)); err != nil {
		return fmt.Errorf("import consumed registration %s: %w", r.Name, s.db.Check(err))
	}
	return nil
}
