package vmedia

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/bootassets"
)

// Release is what a window's media are made of: its staged release.
type Release struct {
	// Dir is the release's folder (assets/<release>); its ISO
	// ([bootassets.AssetISO]) is every medium's base.
	Dir string
	// Version is the release's installer, which answers are rendered
	// for.
	Version answer.Version
	// BaseURL and CertFingerprint are the window's, for the first-boot
	// and webhook URLs of answers put on media.
	BaseURL, CertFingerprint string
	// Logger receives what the rendering drops; nil discards.
	Logger *slog.Logger
}

// MediaOf returns the [Config].Media of a window over its backend b: a
// node whose answer goes on its medium (b's MediaAnswer returns one)
// gets the release ISO composed with that answer
// ([bootassets.ComposeAnswerISO]; the ISO is not copied), its Claim
// consuming the registration; another (a MediaAnswer of nil, or a
// backend without answers for media) gets the release ISO as it is, its
// installer fetching its answer from the window.
func MediaOf(b backend.Backend, rel Release) func(ctx context.Context, node, clientIP string) (*Medium, error) {
	log := rel.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return func(ctx context.Context, node, clientIP string) (*Medium, error) {
		var res *backend.Answer
		if ma, ok := b.(backend.MediaAnswerer); ok {
			var err error
			res, err = ma.MediaAnswer(ctx, node, backend.AnswerRequest{Version: rel.Version, ClientIP: clientIP, BaseURL: rel.BaseURL, CertFingerprint: rel.CertFingerprint})
			if err != nil {
				return nil, err
			}
		}
		iso := filepath.Join(rel.Dir, bootassets.AssetISO)
		f, err := os.Open(iso)
		if err != nil {
			return nil, fmt.Errorf("the release ISO: %w", err)
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("the release ISO: %w", err)
		}
		if res == nil {
			return &Medium{Image: f, Size: st.Size(), ModTime: st.ModTime(), Close: f.Close}, nil
		}
		if res.Answer == nil {
			f.Close()
			return nil, errors.New("the backend returned no answer and no error")
		}
		body, err := answer.Render(res.Answer, rel.Version, answer.RenderOptions{Header: res.Header, DropUnsupported: true, Logger: log})
		if err == nil {
			var c *bootassets.ComposedISO
			if c, err = bootassets.ComposeAnswerISO(f, st.Size(), rel.Version.String(), body, time.Now()); err == nil {
				clear(body)
				return &Medium{Image: c, Size: c.Size(), ModTime: time.Now().UTC().Truncate(time.Second), Claim: res.Claim, Close: f.Close, Live: live(b, node)}, nil
			}
		}
		f.Close()
		return nil, fmt.Errorf("the medium of %s: %w", node, err)
	}
}

// Pending is a backend that tells whether a node's registration is
// pending: a claimed medium whose node is pending again was re-armed, and
// its answer dies ([Medium.Live]).
type Pending interface {
	Pending(ctx context.Context, node string) (bool, error)
}

// live is the Live of node's claimed medium over b: served while node is
// not pending again (or b cannot tell, or fails to).
func live(b backend.Backend, node string) func(context.Context) bool {
	p, ok := b.(Pending)
	if !ok {
		return nil
	}
	return func(ctx context.Context) bool {
		pending, err := p.Pending(ctx, node)
		return err != nil || !pending
	}
}
