package postgres

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
)

// usedEvery is how often a token's last use is written at most.
const usedEvery = "10 seconds"

// Tokens keeps the management API's tokens ([apitoken.Tokens]) in
// PostgreSQL: a row per token holding its name, scope, expiry and the
// SHA-256 of the token, never the token, with a UNIQUE name so that of
// racing creates of one name on any host exactly one wins; safe for
// concurrent use. A revocation on one host is refused on every host from
// its next request. It does not check expiry: the API does.
type Tokens struct {
	db  *DB
	log *slog.Logger
	now func() time.Time
}

var _ apitoken.Tokens = (*Tokens)(nil)

// OpenTokens returns the tokens of db; log may be nil (db's then).
func OpenTokens(db *DB, log *slog.Logger) *Tokens {
	if log == nil {
		log = db.Log
	}
	return &Tokens{db: db, log: log, now: time.Now}
}

// Create makes a token, stores its hash under name with scope and
// returns it: shown once, kept nowhere. A name taken is [apitoken.ErrExists].
func (s *Tokens) Create(ctx context.Context, name string, scope apitoken.Scope, expires time.Time) (string, error) {
	tok, t, err := apitoken.Mint(name, scope, expires, s.now())
	if err != nil {
		return "", err
	}
	data, err := json.Marshal(t)
	if err != nil {
		return "", fmt.Errorf("api tokens: %w", err)
	}
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	tag, err := s.db.Pool.Exec(ctx, "INSERT INTO np_tokens (name, hash, data) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING", name, t.Hash, string(data))
	if err != nil {
		return "", fmt.Errorf("api tokens: create %s: %w", name, s.db.Check(err))
	}
	if tag.RowsAffected() == 0 {
		return "", fmt.Errorf("%w: %q (revoke it first)", apitoken.ErrExists, name)
	}
	s.log.Info("api token created", "name", name, "scope", string(scope))
	return tok, nil
}

// Revoke removes the token name; every host refuses it from its next
// request.
func (s *Tokens) Revoke(ctx context.Context, name string) error {
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	tag, err := s.db.Pool.Exec(ctx, "DELETE FROM np_tokens WHERE name = $1", name)
	if err != nil {
		return fmt.Errorf("api tokens: revoke %s: %w", name, s.db.Check(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w named %q", apitoken.ErrNotFound, name)
	}
	s.log.Info("api token revoked", "name", name)
	return nil
}

// List returns the tokens (hashes, never tokens) sorted by name, with
// when each was last used.
func (s *Tokens) List(ctx context.Context) ([]apitoken.Token, error) {
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	rows, err := s.db.Pool.Query(ctx, "SELECT data, last_used FROM np_tokens ORDER BY name COLLATE \"C\"")
	if err != nil {
		return nil, fmt.Errorf("api tokens: %w", s.db.Check(err))
	}
	var out []apitoken.Token
	var data string
	var used *time.Time
	_, err = pgx.ForEachRow(rows, []any{&data, &used}, func() error {
		t, err := decodeToken(data)
		if err != nil {
			return err
		}
		if used != nil {
			t.LastUsed = used.UTC().Truncate(time.Second)
		}
		out = append(out, t)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("api tokens: %w", s.db.Check(err))
	}
	return out, nil
}

func decodeToken(data string) (apitoken.Token, error) {
	var t apitoken.Token
	if err := json.Unmarshal([]byte(data), &t); err != nil {
		return t, fmt.Errorf("a stored token cannot be read: %w", err)
	}
	return t, nil
}

// lookup returns the token whose row where selects, marking its use:
// one statement, which writes the last use at most every usedEvery.
func (s *Tokens) lookup(ctx context.Context, where string, args ...any) (apitoken.Token, bool, error) {
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	var data string
	err := s.db.Pool.QueryRow(ctx, `WITH t AS (SELECT name, data, last_used FROM np_tokens WHERE `+where+`),
		u AS (UPDATE np_tokens SET last_used = now() WHERE name IN
			(SELECT name FROM t WHERE last_used IS NULL OR last_used < now() - interval '`+usedEvery+`'))
		SELECT data FROM t`, args...).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return apitoken.Token{}, false, nil
	}
	if err != nil {
		return apitoken.Token{}, false, fmt.Errorf("api tokens: %w", s.db.Check(err))
	}
	t, err := decodeToken(data)
	return t, err == nil, err
}

// Authenticate returns the stored token whose hash is token's, or an
// error wrapping [apitoken.ErrUnknownToken]. The row is found by the
// token's SHA-256, so the lookup's timing tells nothing of the token;
// the hash found is compared again in constant time.
func (s *Tokens) Authenticate(ctx context.Context, token string) (apitoken.Token, error) {
	hash := apitoken.Hash(token)
	t, ok, err := s.lookup(ctx, "hash = $1", hash)
	if err != nil {
		return apitoken.Token{}, err
	}
	if !ok || subtle.ConstantTimeCompare([]byte(t.Hash), []byte(hash)) != 1 {
		return apitoken.Token{}, apitoken.ErrUnknownToken
	}
	return t, nil
}

// Recheck returns t as stored now: an error wrapping
// [apitoken.ErrUnknownToken] once it was revoked or made again under its
// name.
func (s *Tokens) Recheck(ctx context.Context, t apitoken.Token) (apitoken.Token, error) {
	c, ok, err := s.lookup(ctx, "name = $1 AND hash = $2", t.Name, t.Hash)
	if err != nil {
		return apitoken.Token{}, err
	}
	if !ok || subtle.ConstantTimeCompare([]byte(c.Hash), []byte(t.Hash)) != 1 {
		return apitoken.Token{}, fmt.Errorf("token %q: %w", t.Name, apitoken.ErrUnknownToken)
	}
	return c, nil
}

// Import keeps t (a token's hash, never a token) as it is, for copying
// a folder's tokens into the store; a name taken is [apitoken.ErrExists].
func (s *Tokens) Import(ctx context.Context, t apitoken.Token) error {
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
