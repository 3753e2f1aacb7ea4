package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/internal/regularfile"
)

// idempotencyDir is the folder of kept replies, in the API's folder.
const idempotencyDir = "idempotency"

// idempotencyTTL is how long a reply is kept for repeats.
const idempotencyTTL = 24 * time.Hour

// maxIdempotencyKey is the longest key taken.
const maxIdempotencyKey = 255

// Replies is the store of idempotency records: the reply of each POST
// by its Idempotency-Key, kept a day, so that a repeat (also after a
// restart) gets the same reply. [OpenReplies] is the state folder's.
type Replies interface {
	// Lock serialises the requests of one key; the func unlocks. It
	// waits at most until ctx ends.
	Lock(ctx context.Context, key string) (unlock func())
	// Get returns the reply kept for key, nil for none (or one past its
	// day).
	Get(ctx context.Context, key string) (*Reply, error)
	// Put keeps r for key.
	Put(ctx context.Context, key string, r Reply) error
}

// OpenReplies opens the idempotency records kept in apiDir/idempotency
// (0700, one 0600 file per key named by its hash), removing those past
// their day.
func OpenReplies(apiDir string, log *slog.Logger) (Replies, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return openIdempotency(apiDir, log)
}

// idempotency keeps the replies of POSTs by their Idempotency-Key, one
// file per key (named by the key's hash), so that a repeat after a
// restart gets the same reply.
type idempotency struct {
	dir   string
	log   *slog.Logger
	locks [64]sync.Mutex

	mu      sync.Mutex
	expired time.Time // when expire last ran
}

// Reply is a kept reply.
type Reply struct {
	// Request is the hex SHA-256 of the token name, method, path and
	// body of the first request.
	Request string    `json:"request"`
	Status  int       `json:"status"`
	Body    string    `json:"body"`
	Time    time.Time `json:"time"`
}

func openIdempotency(apiDir string, log *slog.Logger) (*idempotency, error) {
	dir := filepath.Join(apiDir, idempotencyDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	if err := atomicfile.CleanTemp(dir); err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	i := &idempotency{dir: dir, log: log}
	i.expire(time.Now())
	return i, nil
}

// expire removes replies older than idempotencyTTL.
func (i *idempotency) expire(now time.Time) {
	i.mu.Lock()
	i.expired = now
	i.mu.Unlock()
	ents, err := os.ReadDir(i.dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > idempotencyTTL {
			os.Remove(filepath.Join(i.dir, e.Name()))
		}
	}
}

func keyHash(key string) [32]byte { return sha256.Sum256([]byte(key)) }

// lock serialises the requests of one key; the func unlocks.
func (i *idempotency) Lock(_ context.Context, key string) func() {
	h := keyHash(key)
	m := &i.locks[h[0]%byte(len(i.locks))]
	m.Lock()
	return m.Unlock
}

func (i *idempotency) path(key string) string {
	h := keyHash(key)
	return filepath.Join(i.dir, hex.EncodeToString(h[:])+".json")
}

// Get returns the reply kept for key, nil for none.
func (i *idempotency) Get(_ context.Context, key string) (*Reply, error) {
	data, err := regularfile.Read(i.path(key), MaxBody*4)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r Reply
	if err := json.Unmarshal(data, &r); err != nil {
		// A file cut short cannot be: writes are atomic. Take it as none.
		i.log.Warn("api: unreadable idempotency record; ignored", "file", i.path(key), "err", err)
		return nil, nil
	}
	if time.Since(r.Time) > idempotencyTTL {
		return nil, nil
	}
	return &r, nil
}

// Put keeps the reply for key; once an hour it also removes the
// replies past their day.
func (i *idempotency) Put(_ context.Context, key string, r Reply) error {
	i.mu.Lock()
	due := r.Time.Sub(i.expired) > time.Hour
	i.mu.Unlock()
	if due {
		i.expire(r.Time)
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(i.path(key), data, 0o600)
}

func requestHash(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}
