package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/internal/regularfile"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// ErrNotEmpty is wrapped by [Copy]'s error for a store that already
// holds state: a copy never overwrites.
var ErrNotEmpty = errors.New("the store already holds state")

// ErrNotPostgres is wrapped by [Copy]'s error when its destination is
// not a PostgreSQL store.
var ErrNotPostgres = errors.New("the destination is not a PostgreSQL store")

// Copied is what [Copy] copied.
type Copied struct {
	// Pending, Consumed and Undelivered count the registrations
	// (Undelivered among Consumed: they stay re-armable).
	Pending, Consumed, Undelivered int
	// Secrets, Tokens, Events, Installs, Replies and Discovered (the
	// discovery inbox's live entries) count the rest.
	Secrets, Tokens, Events, Installs, Replies, Discovered int
	// Broken are the registrations that cannot be read: reported, not
	// copied.
	Broken []registry.Broken
}

// Copy copies the state folder from's state (with the secrets folder of
// o.SecretsDir) into the PostgreSQL store to: its registrations pending,
// consumed and undelivered as they are, the secrets sealed with to's
// key, the API's token hashes, the events (in order, numbered anew),
// the install reports, the idempotency records and the discovery inbox's
// live entries (their IDs and times kept). A store holding any
// state is refused ([ErrNotEmpty]); registrations that cannot be read
// are left out and returned in Broken. It stops at the first failure,
// leaving what it copied: drop the database and run it again.
func Copy(ctx context.Context, from string, o store.Options, to *store.Stores) (Copied, error) {
	var c Copied
	pg, ok := to.Remote().(*Stores)
	if !ok {
		return c, fmt.Errorf("store: copy to %s: %w", to.Store(), ErrNotPostgres)
	}
	holds, err := pg.db.Holds(ctx)
	if err != nil {
		return c, err
	}
	if len(holds) > 0 {
		return c, fmt.Errorf("store: copy to %s: %w (%s); copy into a new database", to.Store(), ErrNotEmpty, strings.Join(holds, ", "))
	}
	for _, step := range []func(context.Context, string, store.Options, *store.Stores, *Copied) error{copyRegistrations, copySecrets, copyTokens, copyEvents, copyInstalls, copyReplies, copyDiscovered} {
		if err := step(ctx, from, o, to, &c); err != nil {
			return c, err
		}
	}
	return c, nil
}

func copyRegistrations(ctx context.Context, from string, o store.Options, to *store.Stores, c *Copied) error {
	src, err := folder.OpenRegistrations(from, o.Logger)
	if err != nil {
		return err
	}
	pending, broken, err := src.Scan(ctx)
	if err != nil {
		return err
	}
	consumed, err := src.Consumed(ctx)
	if err != nil {
		return err
	}
	dst := to.Registrations().(*Registrations)
	for _, r := range append(pending, consumed...) {
		if err := dst.Import(ctx, r); err != nil {
			return fmt.Errorf("store: copy registration %s: %w", r.Name, err)
		}
		switch {
		case r.Consumed == nil:
			c.Pending++
		case r.Consumed.Undelivered:
			c.Consumed++
			c.Undelivered++
		default:
			c.Consumed++
		}
	}
	c.Broken = broken
	return nil
}

// maxSecretFile bounds a password file read.
const maxSecretFile = 4 << 10

func copySecrets(ctx context.Context, _ string, o store.Options, to *store.Stores, c *Copied) error {
	dir := o.SecretsDir
	if dir == "" {
		var err error
		if dir, err = os.UserHomeDir(); err != nil {
			return err
		}
		dir = filepath.Join(dir, ".node-secrets")
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: copy secrets: %w", err)
	}
	sec, err := to.Secrets(ctx)
	if err != nil {
		return err
	}
	dst := sec.(*Secrets)
	for _, e := range ents {
		stem, ok := strings.CutSuffix(e.Name(), ".pw")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		data, err := regularfile.Read(filepath.Join(dir, e.Name()), maxSecretFile)
		if err != nil {
			return fmt.Errorf("store: copy secrets: %w", err)
		}
		pw, _, _ := strings.Cut(string(data), "\n")
		switch name, suffix := splitSecret(stem); suffix {
		case "bmc":
			_, err = dst.WriteBMCPassword(ctx, name, pw)
		case "previous":
			err = dst.WritePreviousPassword(ctx, name, pw)
		default:
			err = dst.WriteRootPassword(ctx, name, pw)
		}
		if err != nil {
			return fmt.Errorf("store: copy secret %s: %w", filepath.Join(dir, e.Name()), err)
		}
		c.Secrets++
	}
	return nil
}

// splitSecret returns the node and the kind of a password file's stem:
// <name>, <name>.bmc or <name>.previous (a node's name holds no dot).
func splitSecret(stem string) (name, suffix string) {
	if n, k, ok := strings.Cut(stem, "."); ok {
		return n, k
	}
	return stem, "root"
}

func copyTokens(ctx context.Context, from string, o store.Options, to *store.Stores, c *Copied) error {
	if _, err := os.Lstat(filepath.Join(from, apitoken.DirName, folder.TokensFile)); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	src, err := folder.OpenTokens(from, o.Logger)
	if err != nil {
		return err
	}
	toks, err := src.List(ctx)
	if err != nil {
		return err
	}
	t, err := to.Tokens()
	if err != nil {
		return err
	}
	for _, tk := range toks {
		if err := t.(*Tokens).Import(ctx, tk); err != nil {
			return fmt.Errorf("store: copy token %s: %w", tk.Name, err)
		}
		c.Tokens++
	}
	return nil
}

func copyEvents(ctx context.Context, from string, _ store.Options, to *store.Stores, c *Copied) error {
	recs, err := folder.OpenEvents(folder.EventsPath(from), folder.EventsOptions{}).Read(ctx, "", 0)
	if err != nil {
		return fmt.Errorf("store: copy events: %w", err)
	}
	dst := to.Events()
	for len(recs) > 0 {
		n := min(len(recs), 500)
		evs := make([]events.Event, n)
		for i, r := range recs[:n] {
			evs[i] = r.Event
		}
		if err := dst.Append(ctx, evs...); err != nil {
			return fmt.Errorf("store: copy events: %w", err)
		}
		c.Events += n
		recs = recs[n:]
	}
	return nil
}

func copyInstalls(ctx context.Context, from string, _ store.Options, to *store.Stores, c *Copied) error {
	if _, err := os.Lstat(filepath.Join(from, folder.InstallsDir)); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	src, err := folder.OpenInstalls(from)
	if err != nil {
		return err
	}
	ins, err := src.List(ctx)
	if err != nil {
		return err
	}
	dst, err := to.Installs()
	if err != nil {
		return err
	}
	for _, in := range ins {
		if err := dst.Put(ctx, in); err != nil {
			return err
		}
		c.Installs++
	}
	return nil
}

// copyReplies copies <from>/api/idempotency/<key hash>.json: the
// folder's file name is the hex SHA-256 of the key, as the store's row.
func copyReplies(ctx context.Context, from string, _ store.Options, to *store.Stores, c *Copied) error {
	dir := filepath.Join(from, apitoken.DirName, "idempotency")
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: copy idempotency records: %w", err)
	}
	for _, e := range ents {
		hash, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || len(hash) != 64 || !e.Type().IsRegular() {
			continue
		}
		data, err := regularfile.Read(filepath.Join(dir, e.Name()), 4<<20)
		if err != nil {
			return fmt.Errorf("store: copy idempotency records: %w", err)
		}
		var r struct {
			Time time.Time `json:"time"`
		}
		if json.Unmarshal(data, &r) != nil {
			continue // a record that cannot be read is none, as the folder's
		}
		if err := to.Remote().(*Stores).db.ImportReply(ctx, hash, string(data), r.Time); err != nil {
			return err
		}
		c.Replies++
	}
	return nil
}

// copyDiscovered copies the discovery inbox's entries live now, as they
// are (IDs, reports, first and last seen).
func copyDiscovered(ctx context.Context, from string, o store.Options, to *store.Stores, c *Copied) error {
	src, err := folder.OpenInbox(from, o.Discovery)
	if err != nil {
		return err
	}
	recs, err := src.List(ctx, time.Now())
	if err != nil || len(recs) == 0 {
		return err
	}
	if err := to.Remote().Discovered().(*Inbox).Import(ctx, recs); err != nil {
		return fmt.Errorf("store: copy the discovery inbox: %w", err)
	}
	c.Discovered = len(recs)
	return nil
}
