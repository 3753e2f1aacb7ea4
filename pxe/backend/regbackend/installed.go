package regbackend

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
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
// Config.Installs) and returns the node it names. A report carrying a
// token (9.2+, the answer's webhook auth-token sent back) that is not the
// node's answer's, compared in constant time, is refused as an unknown
// token is ([backend.ErrNoAnswer]), spending and keeping nothing; a report
// without one is taken. When the report
// cannot be kept the token is put back, so that the installer's retry
// (or the operator's) can post it again; the error then wraps no
// [backend.ErrNoAnswer].
func (b *Backend) Installed(ctx context.Context, token, clientIP string, report *answer.InstallReport) (string, error) {
	raw, ok := b.claim(token, ".webhook")
	if !ok {
		return "", fmt.Errorf("%w: unknown or already used webhook token", backend.ErrNoAnswer)
	}
	name, digest := readWebhookFile(raw)
	if report != nil && report.Token != "" && !tokenMatches(report.Token, digest) {
		// As a wrong URL token: refused, nothing kept or spent.
		b.unclaim(token, ".webhook")
		return "", fmt.Errorf("%w: unknown or already used webhook token", backend.ErrNoAnswer)
	}
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

// webhookFile is the content of a webhook token's one-shot file: the
// node's name, and the SHA-256 of its answer's webhook auth-token (hex)
// when it has one. The auth-token itself is not kept.
func webhookFile(name, auth string) []byte {
	if auth == "" {
		return []byte(name + "\n")
	}
	sum := sha256.Sum256([]byte(auth))
	return []byte(name + "\n" + hex.EncodeToString(sum[:]) + "\n")
}

// readWebhookFile reads a file webhookFile wrote (or one of before the
// auth-token: the name alone): the name and the digest, nil without one.
func readWebhookFile(raw []byte) (string, []byte) {
	name, rest, _ := strings.Cut(strings.TrimSpace(string(raw)), "\n")
	digest, err := hex.DecodeString(strings.TrimSpace(rest))
	if err != nil || len(digest) != sha256.Size {
		digest = nil
	}
	return strings.TrimSpace(name), digest
}

// tokenMatches reports, in constant time, whether token's SHA-256 is
// digest; never when there is no digest (the answer had no auth-token).
func tokenMatches(token string, digest []byte) bool {
	sum := sha256.Sum256([]byte(token))
	return digest != nil && subtle.ConstantTimeCompare(sum[:], digest) == 1
}

// FirstBootReport takes the report of token's first-boot script, once:
// a body [registry.ParseFirstBootReport] reads, which it returns as the
// timeline's words with the node's name. A body it does not read is a
// [*backend.Refusal] of 400 and spends nothing.
func (b *Backend) FirstBootReport(_ context.Context, token, _ string, body []byte) (string, string, error) {
	raw, ok := b.claim(token, ".report")
	if !ok {
		return "", "", fmt.Errorf("%w: unknown or already used first-boot report token", backend.ErrNoAnswer)
	}
	name := strings.TrimSpace(string(raw))
	rep, err := registry.ParseFirstBootReport(body)
	if err != nil {
		b.unclaim(token, ".report")
		return "", "", &backend.Refusal{Status: 400, Reason: err.Error(), Node: name}
	}
	return name, rep.String(), nil
}
