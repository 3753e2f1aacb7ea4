package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// pinValue is a pin as the unique constraint compares it: serials and
// UUIDs without case, as [registry.Match] compares them.
func pinValue(p registry.Pin) string { return strings.ToLower(strings.TrimSpace(p.Value)) }

func samePin(p, q registry.Pin) bool { return p.Kind == q.Kind && pinValue(p) == pinValue(q) }

// prepare normalises and validates r as [registry.Prepare] does
// and returns it with its stored form.
func prepare(r registry.Registration) (registry.Registration, []byte, error) {
	if err := registry.ValidateHostname(r.Name); err != nil {
		return r, nil, err
	}
	if r.Created.IsZero() {
		r.Created = time.Now().UTC().Truncate(time.Second)
	}
	r.Consumed = nil
	data, err := encodeRegistration(r)
	if err != nil {
		return r, nil, err
	}
	// Decoding the stored form normalises (MACs, serial, UUID) and
	// validates what a reader will get.
	if r, err = registry.DecodeRegistration(data, r.Name); err != nil {
		return r, nil, err
	}
	if data, err = encodeRegistration(r); err != nil {
		return r, nil, err
	}
	if len(data) > registry.MaxRegistrationSize {
		return r, nil, fmt.Errorf("%w: registration %s is %d bytes encoded, more than %d", registry.ErrInvalidRegistration, r.Name, len(data), registry.MaxRegistrationSize)
	}
	return r, data, nil
}

// Register writes r, replacing a pending registration of its name. A pin
// another pending registration holds is refused with a
// [*registry.PinTakenError], unless opts.Replace moves it (a
// registration left pinning nothing is removed). The unique constraint
// on pins decides races: a register that loses one runs again and sees
// the winner's pin.
func (s *Registrations) Register(ctx context.Context, r registry.Registration, opts registry.RegisterOptions) (registry.RegisterResult, error) {
	r, data, err := prepare(r)
	if err != nil {
		return registry.RegisterResult{}, err
	}
	var res registry.RegisterResult
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		res = registry.RegisterResult{}
		return s.register(ctx, tx, r, data, opts.Replace, &res)
	})
	if err != nil {
		var pt *registry.PinTakenError
		if errors.As(err, &pt) {
			return res, err
		}
		return res, fmt.Errorf("put registration %s: %w", r.Name, s.db.Check(err))
	}
	if res.Previous != nil {
		s.log.Warn("registration replaced", "node", r.Name)
	} else {
		s.log.Info("registration written", "node", r.Name)
	}
	for _, m := range res.Moved {
		s.log.Warn("pin moved", "pin", m.Pin.String(), "from", m.From, "to", r.Name, "removed", m.Removed)
	}
	return res, nil
}

func (s *Registrations) register(ctx context.Context, tx pgx.Tx, r registry.Registration, data []byte, replace bool, res *registry.RegisterResult) error {
	// Registers of one name wait for each other, so Previous is right.
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('np-registration:' || $1, 0))", r.Name); err != nil {
		return err
	}
	var prev string
	switch err := tx.QueryRow(ctx, "SELECT data FROM np_registrations_pending WHERE name = $1 FOR UPDATE", r.Name).Scan(&prev); {
	case err == nil:
		p, derr := decodeRegistration(prev, r.Name)
		if derr != nil {
			p = registry.Registration{Name: r.Name}
		}
		res.Previous = &p
	case !errors.Is(err, pgx.ErrNoRows):
		return err
	}
	pins := r.Pins()
	holders, err := pinHolders(ctx, tx, r.Name, pins)
	if err != nil {
		return err
	}
	for _, h := range holders {
		if !replace {
			return &registry.PinTakenError{Name: r.Name, Pin: h.taken[0], Holder: h.name}
		}
		moved, err := takePins(ctx, tx, h)
		if err != nil {
			return err
		}
		res.Moved = append(res.Moved, moved...)
	}
	if _, err := tx.Exec(ctx, "DELETE FROM np_registration_pins WHERE name = $1", r.Name); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO np_registrations_pending (name, data) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET data = EXCLUDED.data`, r.Name, string(data)); err != nil {
		return err
	}
	return insertPins(ctx, tx, r.Name, pins)
}

func insertPins(ctx context.Context, tx pgx.Tx, name string, pins []registry.Pin) error {
	if len(pins) == 0 {
		return nil
	}
	kinds, values := make([]string, len(pins)), make([]string, len(pins))
	for i, p := range pins {
		kinds[i], values[i] = p.Kind, pinValue(p)
	}
	_, err := tx.Exec(ctx, `INSERT INTO np_registration_pins (kind, value, name)
		SELECT k, v, $3 FROM unnest($1::text[], $2::text[]) AS q(k, v)`, kinds, values, name)
	return err
}

// holder is another pending registration holding some of the pins.
type holder struct {
	name  string
	taken []registry.Pin // the new registration's pins it holds, in their order
}

// pinHolders returns the other pending registrations holding any of
// pins, sorted by name, locking their rows.
func pinHolders(ctx context.Context, tx pgx.Tx, name string, pins []registry.Pin) ([]holder, error) {
	if len(pins) == 0 {
		return nil, nil
	}
	kinds, values := make([]string, len(pins)), make([]string, len(pins))
	for i, p := range pins {
		kinds[i], values[i] = p.Kind, pinValue(p)
	}
	rows, err := tx.Query(ctx, `SELECT p.name, p.kind, p.value FROM np_registration_pins p
		JOIN unnest($1::text[], $2::text[]) AS q(k, v) ON p.kind = q.k AND p.value = q.v
		WHERE p.name <> $3 ORDER BY p.name`, kinds, values, name)
	if err != nil {
		return nil, err
	}
	var out []holder
	var n, k, v string
	_, err = pgx.ForEachRow(rows, []any{&n, &k, &v}, func() error {
		if len(out) == 0 || out[len(out)-1].name != n {
			out = append(out, holder{name: n})
		}
		h := &out[len(out)-1]
		for _, p := range pins {
			if samePin(p, registry.Pin{Kind: k, Value: v}) && !slices.ContainsFunc(h.taken, func(q registry.Pin) bool { return samePin(p, q) }) {
				h.taken = append(h.taken, p)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range out {
		// In the new registration's order of pins, as the folder store.
		slices.SortStableFunc(out[i].taken, func(a, b registry.Pin) int {
			return slices.IndexFunc(pins, func(p registry.Pin) bool { return samePin(p, a) }) -
				slices.IndexFunc(pins, func(p registry.Pin) bool { return samePin(p, b) })
		})
	}
	return out, nil
}

// takePins takes h's pins from it, removing it when it pins nothing more.
func takePins(ctx context.Context, tx pgx.Tx, h holder) ([]registry.PinMove, error) {
	var data string
	if err := tx.QueryRow(ctx, "SELECT data FROM np_registrations_pending WHERE name = $1 FOR UPDATE", h.name).Scan(&data); err != nil {
		return nil, fmt.Errorf("move pins from registration %s: %w", h.name, err)
	}
	o, err := decodeRegistration(data, h.name)
	if err != nil {
		return nil, fmt.Errorf("move pins from registration %s: %w", h.name, err)
	}
	left := withoutPins(o, h.taken)
	removed := !left.Pinned()
	if removed {
		_, err = tx.Exec(ctx, "DELETE FROM np_registrations_pending WHERE name = $1", h.name)
	} else {
		var enc []byte
		if enc, err = encodeRegistration(left); err == nil {
			_, err = tx.Exec(ctx, "UPDATE np_registrations_pending SET data = $2 WHERE name = $1", h.name, string(enc))
		}
		if err == nil {
			_, err = tx.Exec(ctx, "DELETE FROM np_registration_pins WHERE name = $1", h.name)
		}
		if err == nil {
			err = insertPins(ctx, tx, h.name, left.Pins())
		}
	}
	if err != nil {
		return nil, fmt.Errorf("move pins from registration %s: %w", h.name, err)
	}
	var moved []registry.PinMove
	for _, p := range h.taken {
		moved = append(moved, registry.PinMove{Pin: p, From: h.name, Removed: removed})
	}
	return moved, nil
}

// withoutPins returns r without the pins given.
func withoutPins(r registry.Registration, pins []registry.Pin) registry.Registration {
	has := func(p registry.Pin) bool {
		return slices.ContainsFunc(pins, func(q registry.Pin) bool { return samePin(p, q) })
	}
	r.MACs = slices.DeleteFunc(slices.Clone(r.MACs), func(m string) bool { return has(registry.Pin{Kind: registry.PinMAC, Value: m}) })
	if r.Serial != "" && has(registry.Pin{Kind: registry.PinSerial, Value: r.Serial}) {
		r.Serial = ""
	}
	if r.UUID != "" && has(registry.Pin{Kind: registry.PinUUID, Value: r.UUID}) {
		r.UUID = ""
	}
	return r
}
