package regbackend

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/secret"
)

// Installed takes the installer's report of success for token, once,
// keeps report with the node's consumed registration (in
// Config.Installs) and returns the node it names. When the report
// cannot be kept the token is put back, so that the installer's retry
// (or the operator's) can post it again; the error then wraps no
// [backend.ErrNoAnswer].
func (b *Backend) Installed(ctx context.Context, token, clientIP string, report *answer.InstallReport) (string, error) {
	raw, ok := b.claim(token, ".webhook")
	if !ok {
		return "", fmt.Errorf("%w: unknown or already used webhook token", backend.ErrNoAnswer)
	}
	name := strings.TrimSpace(string(raw))
	if b.cfg.Installs != nil && report != nil {
		in := registry.Install{Name: name, Reported: b.cfg.Now().UTC(), ClientIP: clientIP, Report: *report}
		if err := b.cfg.Installs.Put(ctx, in); err != nil {
			b.unclaim(token, ".webhook")
			return "", fmt.Errorf("keep the install report of %s: %w", name, err)
		}
	}
	// A reinstall kept the node's previous root password until now.
	if p, ok := b.cfg.Secrets.(secret.Previous); ok {
		if err := p.ForgetPrevious(ctx, name); err != nil {
			b.log.Warn("the previous root password of a reinstalled node is still kept", "node", name, "err", err)
		}
	}
	// The window records the installer's report (Record), which marks
	// the node installed.
	return name, nil
}

// unclaim puts back a one-shot file [Backend.claim] took.
func (b *Backend) unclaim(token, ext string) {
	src := filepath.Join(b.dir, token+ext)
	if err := os.Rename(src+".served", src); err != nil {
		b.log.Error("cannot put back a one-shot file", "err", err)
	}
}
