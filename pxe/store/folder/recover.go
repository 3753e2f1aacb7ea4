package folder

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// Recover is the registrations' and secrets' part in a window's start,
// run under the state folder's lock, so no other window is between an
// answer's steps. It refuses a folder an answer cannot be written to
// (wrapping [atomicfile.ErrNotWritable]), removes the secrets a killed
// window staged, and puts back to pending each registration whose answer
// never left: consumed, not seen delivered and with no root password (a
// window killed between the consumption and placing the answer's files),
// which then installs at its machine's next boot. log may be nil.
func Recover(ctx context.Context, regs *Registrations, sec *Secrets, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	for _, f := range []struct{ what, dir string }{{"registrations", regs.dir}, {"secrets", sec.dir}} {
		if err := atomicfile.Probe(f.dir); err != nil {
			return fmt.Errorf("the %s folder %s: %w", f.what, f.dir, err)
		}
	}
	if err := atomicfile.CleanTemp(sec.dir); err != nil {
		log.Warn("cannot remove stale temporary files", "dir", sec.dir, "err", err)
	}
	consumed, err := regs.Consumed(ctx)
	if err != nil {
		log.Warn("cannot look for answers that never left", "err", err)
		return nil
	}
	for _, r := range consumed {
		if r.Consumed == nil || !r.Consumed.Undelivered {
			continue
		}
		if _, err := os.Lstat(sec.PasswordPath(r.Name)); !errors.Is(err, fs.ErrNotExist) {
			continue // its password is there (or cannot be told): the answer may have left
		}
		if err := regs.Rearm(ctx, r.Name, registry.RearmOptions{WipeData: r.WipeData}); err != nil {
			log.Warn("cannot re-arm a registration whose answer never left; re-arm it", "node", r.Name, "err", err)
			continue
		}
		log.Warn("re-armed a registration whose answer never left (the window stopped between its consumption and placing its files)", "node", r.Name)
	}
	return nil
}
