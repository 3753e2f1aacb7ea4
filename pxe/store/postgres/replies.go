package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/plasmactl/plasma-node/pxe/idempotency"
)

// lockClass is the first key of the keys' advisory locks ("np" in
// ASCII): the two-key space, apart from the stores' one-key locks.
const lockClass int32 = 0x6e70

// Replies keeps the management API's idempotency records
// ([idempotency.Store]) in PostgreSQL: the reply of each POST by the SHA-256
// of its Idempotency-Key, kept a day, so that a repeat sent to any host
// (also after a restart) gets the same reply; safe for concurrent use.
// The requests of one key wait for each other across hosts:
// [Replies.Lock] holds an advisory lock of the key on a connection of
// its own.
type Replies struct {
	db    *DB
	locks [64]sync.Mutex
	// held bounds the connections Lock holds at once (a slot each), so
	// that the requests holding them find connections for their work.
	held chan struct{}

	mu      sync.Mutex
	expired time.Time // when old replies were last removed
	// unheld are the keys whose Lock could not take the cross-host
	// lock, with why: their Get fails until they are unlocked.
	unheld map[[32]byte]error
}

var _ idempotency.Store = (*Replies)(nil)

// reserved are the pool's connections other stores hold for long (the
// event and window streams' LISTEN), left out of Lock's share.
const reserved = 2

// OpenReplies returns the idempotency records of db. Its locks hold at most
// half of the pool's other connections at once, so that requests
// holding a lock always find one for their work.
func OpenReplies(db *DB) *Replies {
	n := max(1, (int(db.Pool.Config().MaxConns)-reserved)/2)
	return &Replies{db: db, held: make(chan struct{}, n), unheld: map[[32]byte]error{}}
}

func keyHash(key string) [32]byte { return sha256.Sum256([]byte(key)) }

// Lock serialises the requests of key, on this host by a mutex and
// across hosts by an advisory lock held on a connection of its own
// until the func is called; at most a share of the pool's connections
// is held so (see [OpenReplies]), the other requests waiting for a slot first.
// When the cross-host lock cannot be taken before ctx ends or in the
// store's time (no slot, connection or lock; the database down or busy),
// it serialises this host's only and the Get of key fails until the func
// is called: the request is refused rather than run unserialised.
func (s *Replies) Lock(ctx context.Context, key string) (unlock func()) {
	h := keyHash(key)
	m := &s.locks[h[0]%byte(len(s.locks))]
	m.Lock()
	// The unlock runs when the request is done, perhaps cancelled, and
	// must still let the lock go: it outlives the request's context.
	keep := context.WithoutCancel(ctx)
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	select {
	case s.held <- struct{}{}:
	case <-ctx.Done():
		return s.unlocked(h, ctx.Err(), m.Unlock)
	}
	release := func() { <-s.held; m.Unlock() }
	conn, err := s.db.Pool.Acquire(ctx)
	if err != nil {
		return s.unlocked(h, err, release)
	}
	k := int32(binary.BigEndian.Uint32(h[:4]))
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1, $2)", lockClass, k); err != nil {
		drop(keep, conn)
		return s.unlocked(h, err, release)
	}
	return func() {
		defer release()
		ctx, cancel := s.db.Bound(keep)
		defer cancel()
		if _, err := conn.Exec(ctx, "SELECT pg_advisory_unlock($1, $2)", lockClass, k); err != nil {
			drop(keep, conn) // the session's end lets the lock go
			return
		}
		conn.Release()
	}
}

// unlocked records that the lock of the key hashed h was not taken, for
// err, until the func it returns (which then calls release) is called.
func (s *Replies) unlocked(h [32]byte, err error, release func()) func() {
	s.mu.Lock()
	s.unheld[h] = s.db.Check(fmt.Errorf("take the key's lock: %w", err))
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.unheld, h)
		s.mu.Unlock()
		release()
	}
}

// drop closes a connection instead of returning it to the pool; ctx
// must not be cancelled with the request, or the goodbye is not said.
func drop(ctx context.Context, conn *pgxpool.Conn) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_ = conn.Hijack().Close(ctx)
}

// Get returns the reply kept for key, nil for none or one past its day.
func (s *Replies) Get(ctx context.Context, key string) (*idempotency.Reply, error) {
	h := keyHash(key)
	s.mu.Lock()
	lerr := s.unheld[h]
	s.mu.Unlock()
	if lerr != nil {
		return nil, fmt.Errorf("idempotency record: %w", lerr)
	}
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	var data string
	err := s.db.Pool.QueryRow(ctx, "SELECT data FROM np_replies WHERE key_hash = $1", hex.EncodeToString(h[:])).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("idempotency record: %w", s.db.Check(err))
	}
	var r idempotency.Reply
	if err := json.Unmarshal([]byte(data), &r); err != nil {
		s.db.Log.Warn("unreadable idempotency record; ignored", "err", err)
		return nil, nil
	}
	if time.Since(r.Time) > idempotency.TTL {
		return nil, nil
	}
	return &r, nil
}

// Put keeps r for key; once an hour it also removes the replies past
// their day.
func (s *Replies) Put(ctx context.Context, key string, r idempotency.Reply) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	h := keyHash(key)
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	if _, err := s.db.Pool.Exec(ctx, `INSERT INTO np_replies (key_hash, data, at) VALUES ($1, $2, $3)
		ON CONFLICT (key_hash) DO UPDATE SET data = EXCLUDED.data, at = EXCLUDED.at`, hex.EncodeToString(h[:]), string(data), r.Time); err != nil {
		return fmt.Errorf("keep idempotency record: %w", s.db.Check(err))
	}
	s.mu.Lock()
	due := r.Time.Sub(s.expired) > time.Hour
	if due {
		s.expired = r.Time
	}
	s.mu.Unlock()
	if due {
		if _, err := s.db.Pool.Exec(ctx, "DELETE FROM np_replies WHERE at < $1", r.Time.Add(-idempotency.TTL)); err != nil {
			s.db.Log.Warn("cannot remove old idempotency records", "err", s.db.Check(err))
		}
	}
	return nil
}
