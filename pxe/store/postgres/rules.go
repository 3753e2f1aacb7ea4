package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/plasmactl/plasma-node/pxe/enrol"
)

// maxRules bounds the rule state read or written: 8 MiB, as the state
// folder's.
const maxRules = 8 << 20

// Rules keeps the enrolment rules ([enrol.Store]) in PostgreSQL: one
// row of np_rules, read FOR UPDATE and written back in one transaction
// by each update, so that updates racing from any number of hosts are
// applied one at a time. Safe for concurrent use.
type Rules struct{ db *DB }

var _ enrol.Store = (*Rules)(nil)

// OpenRules returns the rule store of db.
func OpenRules(db *DB) *Rules { return &Rules{db: db} }

// Read returns the kept state.
func (s *Rules) Read(ctx context.Context) (enrol.State, error) {
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	st, err := s.read(ctx, s.db.Pool, "")
	if err != nil {
		return enrol.State{}, fmt.Errorf("read enrolment rules: %w", s.db.Check(err))
	}
	return st, nil
}

// Update applies fn to the row, locked, and writes its result in the
// same transaction; an error of fn writes nothing and is returned as it
// is.
func (s *Rules) Update(ctx context.Context, fn func(enrol.State) (enrol.State, error)) (enrol.State, error) {
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	var out enrol.State
	var fnErr error
	err := pgx.BeginFunc(ctx, s.db.Pool, func(tx pgx.Tx) error {
		st, err := s.read(ctx, tx, " FOR UPDATE")
		if err != nil {
			return err
		}
		if out, fnErr = fn(st); fnErr != nil {
			return fnErr
		}
		data, err := json.Marshal(out)
		if err != nil {
			return err
		}
		if len(data) > maxRules {
			return fmt.Errorf("enrolment rules: %d bytes, more than %d", len(data), maxRules)
		}
		_, err = tx.Exec(ctx, "UPDATE np_rules SET data = $1 WHERE id = 1", string(data))
		return err
	})
	if fnErr != nil {
		return enrol.State{}, fnErr
	}
	if err != nil {
		return enrol.State{}, fmt.Errorf("update enrolment rules: %w", s.db.Check(err))
	}
	return out, nil
}

func (s *Rules) read(ctx context.Context, q querier, lock string) (enrol.State, error) {
	var data string
	if err := q.QueryRow(ctx, "SELECT data FROM np_rules WHERE id = 1"+lock).Scan(&data); err != nil {
		return enrol.State{}, err
	}
	if len(data) > maxRules {
		return enrol.State{}, fmt.Errorf("enrolment rules (np_rules): %d bytes, more than %d", len(data), maxRules)
	}
	var st enrol.State
	if err := json.Unmarshal([]byte(data), &st); err != nil {
		return enrol.State{}, fmt.Errorf("enrolment rules (np_rules): %w", err)
	}
	return st, nil
}
