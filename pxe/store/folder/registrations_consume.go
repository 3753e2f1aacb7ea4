package folder

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// Consume marks the pending registration name as served, once: it moves
// <name>.json to <name>.json.consumed with rec recorded in it, and returns
// the consumed registration. Of any number of simultaneous calls for one
// name, in this process or others, exactly one succeeds; the others get
// an error wrapping [registry.ErrAlreadyConsumed] (or [registry.ErrNotFound] when the name
// was never registered or was deleted). An expired ctx while waiting for
// the folder's lock gives an error wrapping ctx.Err().
//
// How it holds across processes and crashes: under the folder's lock
// file, the pending file is first renamed to a unique claim file
// (<name>.json.claim-<random>; only one rename of a file can win), then
// the record is written into the claim atomically, then the claim is
// renamed to <name>.json.consumed. A claim left by a killed process is
// recovered the next time the lock is taken ([OpenRegistrations], Consume): a
// claim that already holds the record is finished (renamed to .consumed,
// since the answer may be on its way), one without is put back as
// pending (the caller died before the answer could be sent), unless a
// newer <name>.json exists, which then wins and the claim is dropped.
func (g *Registrations) Consume(ctx context.Context, name string, rec registry.ConsumeRecord) (registry.Registration, error) {
	if err := ctx.Err(); err != nil {
		return registry.Registration{}, fmt.Errorf("consume registration %s: %w", name, err)
	}
	if err := registry.ValidateName(name); err != nil {
		return registry.Registration{}, err
	}
	if rec.Time.IsZero() {
		rec.Time = time.Now().UTC()
	}
	if len(rec.MACs) == 0 {
		rec.MACs = nil
	}
	pending := g.pendingPath(name)
	claim, err := claimName(pending)
	if err != nil {
		return registry.Registration{}, fmt.Errorf("consume registration %s: %w", name, err)
	}
	// The record is written and synced before the lock is taken; under
	// it, only renames (see prestaged).
	pre := g.prestage(pending, claim, name, func(r *registry.Registration) error {
		r.Consumed = &rec
		return nil
	})
	defer pre.discard()
	r, err := g.consumeLocked(ctx, name, claim, &rec, pre)
	if err != nil {
		return registry.Registration{}, err
	}
	// The folder is synced after the lock is released, so that the
	// consumptions waiting together share one journal commit; the
	// registration is consumed on disk before Consume returns, so
	// before its answer is sent.
	if err := atomicfile.SyncDir(g.dir); err != nil {
		return registry.Registration{}, fmt.Errorf("consume registration %s: %w", name, err)
	}
	g.log.Info("registration consumed", "node", name, "client_ip", rec.ClientIP)
	return r, nil
}

// consumeLocked is Consume's part under the folder's lock: the claim,
// the record written into it, the claim renamed to the consumed file.
// The folder is not synced.
func (g *Registrations) consumeLocked(ctx context.Context, name, claim string, rec *registry.ConsumeRecord, pre *prestaged) (registry.Registration, error) {
	unlock, err := g.lock(ctx, "node-provisioner consume "+name)
	if err != nil {
		return registry.Registration{}, err
	}
	defer unlock()
	// Listing the folder for what killed consumers left costs as much as
	// the folder is large: only when another process held the lock since
	// this store last did (it may have died holding it), or a consumption
	// here stopped half-way.
	if g.dirty {
		if err := g.cleanLocked(); err != nil {
			return registry.Registration{}, err
		}
		g.dirty = false
	}
	pending := g.pendingPath(name)
	if err := os.Rename(pending, claim); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			return registry.Registration{}, fmt.Errorf("consume registration %s: %w", name, err)
		}
		if _, serr := os.Lstat(g.consumedPath(name)); serr == nil {
			return registry.Registration{}, fmt.Errorf("consume registration %s: %w", name, registry.ErrAlreadyConsumed)
		}
		return registry.Registration{}, fmt.Errorf("consume registration %s: %w named %q", name, registry.ErrNotFound, name)
	}
	// From here on this call owns the registration; a return before the
	// consumption is done may leave the claim for the next cleanup.
	done := false
	defer func() {
		if !done {
			g.dirty = true
		}
	}()
	r, read, err := g.readFileData(claim, name)
	if err != nil {
		g.restoreClaim(claim, name)
		return registry.Registration{}, fmt.Errorf("consume registration %s: %w", name, err)
	}
	r.Consumed = rec
	if !pre.place(read) {
		data, err := registry.EncodeRegistration(r)
		if err == nil {
			err = write(claim, data)
		}
		if err != nil {
			g.restoreClaim(claim, name)
			return registry.Registration{}, fmt.Errorf("consume registration %s: %w", name, err)
		}
	}
	// The record is in the claim: the registration is consumed even if we
	// die now (recovery finishes the rename).
	if err := os.Rename(claim, g.consumedPath(name)); err != nil {
		return registry.Registration{}, fmt.Errorf("consume registration %s: %w", name, err)
	}
	done = true
	return r, nil
}

func claimName(pending string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return strings.TrimSuffix(pending, pendingSuffix) + claimInfix + hex.EncodeToString(b[:]), nil
}

// restoreClaim puts a claim back as the pending file, unless a newer
// pending file exists; then the claim is dropped.
func (g *Registrations) restoreClaim(claim, name string) {
	pending := g.pendingPath(name)
	switch err := os.Link(claim, pending); {
	case err == nil:
		g.log.Warn("registration restored to pending after an interrupted consumption", "node", name, "file", pending)
	case errors.Is(err, os.ErrExist):
		g.log.Warn("dropping the claim of an interrupted consumption: a newer registration exists", "node", name, "claim", claim)
	default:
		g.log.Error("cannot restore an interrupted consumption; the claim file is kept", "node", name, "claim", claim, "err", err)
		return
	}
	if err := os.Remove(claim); err != nil && !errors.Is(err, os.ErrNotExist) {
		g.log.Error("cannot remove a claim file", "claim", claim, "err", err)
	}
	_ = atomicfile.SyncDir(g.dir)
}

// recoverClaims runs with the lock held, so every claim it sees was left
// by a dead consumer.
func (g *Registrations) recoverClaims() error {
	ents, err := os.ReadDir(g.dir)
	if err != nil {
		return fmt.Errorf("recover registrations %s: %w", g.dir, err)
	}
	for _, e := range ents {
		name, _, ok := strings.Cut(e.Name(), claimInfix)
		if !ok || registry.ValidateName(name) != nil {
			continue
		}
		claim := filepath.Join(g.dir, e.Name())
		r, err := g.readFile(claim, name)
		switch {
		case err != nil:
			g.log.Warn("restoring an unreadable claim file as pending", "claim", claim, "err", err)
			g.restoreClaim(claim, name)
		case r.Consumed != nil:
			if err := os.Rename(claim, g.consumedPath(name)); err != nil {
				return fmt.Errorf("recover registration %s: %w", name, err)
			}
			g.log.Warn("finished an interrupted consumption", "node", name, "file", g.consumedPath(name))
		default:
			g.restoreClaim(claim, name)
		}
	}
	return nil
}

// MarkDelivered records that the consumed registration name's answer
// reached its installer (clears [registry.ConsumeRecord].Undelivered).
func (g *Registrations) MarkDelivered(ctx context.Context, name string) error {
	return g.updateConsumed(ctx, name, "mark delivered", func(r *registry.Registration) error {
		r.Consumed.Undelivered = false
		return nil
	})
}

// Rearm puts the consumed registration name back to pending, so that its
// machine is answered again: only when its answer was not seen delivered,
// else with an error wrapping [registry.ErrDelivered], unless o.Force, and
// with o.WipeData as its WipeData. A pending
// registration of the same name gives an error wrapping
// [registry.ErrInvalidRegistration]; an unknown name one wrapping [registry.ErrNotFound].
func (g *Registrations) Rearm(ctx context.Context, name string, o registry.RearmOptions) error {
	if err := registry.ValidateName(name); err != nil {
		return err
	}
	unlock, err := g.lock(ctx, "node-provisioner rearm "+name)
	if err != nil {
		return err
	}
	defer unlock()
	r, err := g.readFile(g.consumedPath(name), name)
	if errors.Is(err, os.ErrNotExist) {
		_, perr := os.Lstat(g.pendingPath(name))
		return fmt.Errorf("rearm %s: %w", name, registry.NotConsumed(name, perr == nil, "re-arm"))
	}
	if err != nil {
		return fmt.Errorf("rearm %s: %w", name, err)
	}
	if r.Consumed != nil && !r.Consumed.Undelivered && !o.Force {
		return fmt.Errorf("rearm %s: %w at %s; register it again to reinstall", name, registry.ErrDelivered, r.Consumed.Time.UTC().Format(time.RFC3339))
	}
	if _, err := os.Lstat(g.pendingPath(name)); err == nil {
		return invalid("rearm %s: a pending registration of that name exists", name)
	}
	r.Consumed = nil
	r.WipeData = o.WipeData
	data, err := registry.EncodeRegistration(r)
	if err == nil {
		err = atomicfile.CreateExclusive(g.pendingPath(name), data, 0o600)
	}
	if err != nil {
		return fmt.Errorf("rearm %s: %w", name, err)
	}
	if err := os.Remove(g.consumedPath(name)); err != nil {
		return fmt.Errorf("rearm %s: %w", name, err)
	}
	g.log.Info("registration re-armed", "node", name)
	return atomicfile.SyncDir(g.dir)
}

// updateConsumed rewrites the consumed registration name under the lock.
func (g *Registrations) updateConsumed(ctx context.Context, name, what string, f func(*registry.Registration) error) error {
	path := g.consumedPath(name)
	// The new content is written and synced before the lock is taken
	// (see prestaged); the folder is synced after it is released.
	pre := g.prestage(path, path, name, func(r *registry.Registration) error {
		if r.Consumed == nil {
			r.Consumed = &registry.ConsumeRecord{}
		}
		return f(r)
	})
	defer pre.discard()
	if err := g.updateConsumedLocked(ctx, name, what, f, pre); err != nil {
		return err
	}
	if err := atomicfile.SyncDir(g.dir); err != nil {
		return fmt.Errorf("%s %s: %w", what, name, err)
	}
	return nil
}

// updateConsumedLocked is updateConsumed's part under the lock.
func (g *Registrations) updateConsumedLocked(ctx context.Context, name, what string, f func(*registry.Registration) error, pre *prestaged) error {
	unlock, err := g.lock(ctx, "node-provisioner "+what+" "+name)
	if err != nil {
		return err
	}
	defer unlock()
	path := g.consumedPath(name)
	r, read, err := g.readFileData(path, name)
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, name, err)
	}
	if r.Consumed == nil {
		r.Consumed = &registry.ConsumeRecord{}
	}
	if err := f(&r); err != nil {
		return err
	}
	if pre.place(read) {
		return nil
	}
	data, err := registry.EncodeRegistration(r)
	if err == nil {
		err = write(path, data)
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, name, err)
	}
	return nil
}
