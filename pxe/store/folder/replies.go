package folder

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
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/apitype"
	"github.com/plasmactl/plasma-node/pxe/idempotency"
)

// maxReply bounds a kept reply read: four request bodies.
const maxReply = apitype.MaxBody * 4

// OpenReplies opens the API's idempotency records kept in the state
// folder's api/idempotency/ (0700, one 0600 file per key named by its
// hash), removing those past their day.
func OpenReplies(stateDir string, log *slog.Logger) (idempotency.Store, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir := filepath.Join(stateDir, apitoken.DirName, "idempotency")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("idempotency records: %w", err)
	}
	if err := atomicfile.CleanTemp(dir); err != nil {
		return nil, fmt.Errorf("idempotency records: %w", err)
	}
	i := &replies{dir: dir, log: log}
	i.expire(time.Now())
	return i, nil
}

// replies keeps the replies of POSTs by their Idempotency-Key, one file
// per key (named by the key's hash), so that a repeat after a restart
// gets the same reply.
type replies struct {
	dir   string
	log   *slog.Logger
	locks [64]sync.Mutex

	mu      sync.Mutex
	expired time.Time // when expire last ran
}

// expire removes replies older than TTL.
func (i *replies) expire(now time.Time) {
	i.mu.Lock()
	i.expired = now
	i.mu.Unlock()
	ents, err := os.ReadDir(i.dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > idempotency.TTL {
			os.Remove(filepath.Join(i.dir, e.Name()))
		}
	}
}

func replyKeyHash(key string) [32]byte { return sha256.Sum256([]byte(key)) }

// Lock serialises the requests of one key; the func unlocks.
func (i *replies) Lock(_ context.Context, key string) func() {
	h := replyKeyHash(key)
	m := &i.locks[h[0]%byte(len(i.locks))]
	m.Lock()
	return m.Unlock
}

func (i *replies) path(key string) string {
	h := replyKeyHash(key)
	return filepath.Join(i.dir, hex.EncodeToString(h[:])+".json")
}

// Get returns the reply kept for key, nil for none.
func (i *replies) Get(_ context.Context, key string) (*idempotency.Reply, error) {
	data, err := regularfile.Read(i.path(key), maxReply)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r idempotency.Reply
	if err := json.Unmarshal(data, &r); err != nil {
		// A file cut short cannot be: writes are atomic. Take it as none.
		i.log.Warn("unreadable idempotency record; ignored", "file", i.path(key), "err", err)
		return nil, nil
	}
	if time.Since(r.Time) > idempotency.TTL {
		return nil, nil
	}
	return &r, nil
}

// Put keeps the reply for key; once an hour it also removes the
// replies past their day.
func (i *replies) Put(_ context.Context, key string, r idempotency.Reply) error {
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
