package regbackend

import (
	"context"
	"errors"
	"io/fs"
	"os"
)

// passwordFiles is a secret store that keeps each root password in a
// file of its own (the secrets folder).
type passwordFiles interface {
	PasswordPath(name string) string
}

// rearmUnsent puts back to pending each registration whose answer never
// left: consumed, not seen delivered, and with no root password in the
// secrets folder. An answer's files are staged, its registration is
// consumed, its files are put in place, and only then is it sent; a
// window killed between the consumption and the placing left a
// registration that no installer got an answer for, which is installed
// at its machine's next boot instead of waiting for an operator's rearm.
//
// It runs only when both the registrations and the secrets are folders,
// which the window holding the state folder's lock has to itself (as for
// the staged files [New] removes): no other window can be between
// those steps. With a shared store (two hosts), such a registration stays
// undelivered until it is re-armed, as one whose connection died does.
func (b *Backend) rearmUnsent(ctx context.Context, pw passwordFiles) {
	consumed, err := b.cfg.Store.Consumed(ctx)
	if err != nil {
		b.log.Warn("cannot look for answers that never left", "err", err)
		return
	}
	for _, r := range consumed {
		if r.Consumed == nil || !r.Consumed.Undelivered {
			continue
		}
		if _, err := os.Lstat(pw.PasswordPath(r.Name)); !errors.Is(err, fs.ErrNotExist) {
			continue // its password is there (or cannot be told): the answer may have left
		}
		if err := b.cfg.Store.Rearm(ctx, r.Name, false); err != nil {
			b.log.Warn("cannot re-arm a registration whose answer never left; re-arm it", "node", r.Name, "err", err)
			continue
		}
		b.log.Warn("re-armed a registration whose answer never left (the window stopped between its consumption and placing its files)", "node", r.Name)
	}
}
