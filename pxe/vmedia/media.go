package vmedia

import (
	"bytes"
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
	// BaseURL, CertFingerprint and CertPin are the window's, for the
	// first-boot and webhook URLs of answers put on media.
	BaseURL, CertFingerprint, CertPin string
	// Logger receives what the rendering drops; nil discards.
	Logger *slog.Logger
}

// MediaOf returns the [Config].Media of a window over its backend b: a
// node whose answer goes on its medium (b's MediaAnswer returns one)
// gets the release ISO composed with that answer
// ([bootassets.ComposeAnswerISO]; the ISO is not copied), its Claim
// consuming the registration; another (a MediaAnswer of nil, or a
// backend without answers for media) gets the release ISO as it is, its
// installer fetching its answer from the window. A node whose answer
// goes on an answer image ([AnswerImages]) gets the release ISO of
// partition mode as its CD ([bootassets.ComposePartitionISO], the same
// for every node, claiming nothing) and its answer in its answer image
// ([bootassets.AnswerImage], held in memory only), whose Claim consumes
// the registration.
func MediaOf(b backend.Backend, rel Release) func(ctx context.Context, node string, k Kind, clientIP string) (*Medium, error) {
	log := rel.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return func(ctx context.Context, node string, k Kind, clientIP string) (*Medium, error) {
		onImage := false
		if ai, ok := b.(AnswerImages); ok {
			var err error
			if onImage, err = ai.AnswerOnImage(ctx, node); err != nil {
				return nil, err
			}
		}
		if k == AnswerImage && !onImage {
			return nil, fmt.Errorf("%w: %s reads no answer image", backend.ErrNoAnswer, node)
		}
		if onImage && !bootassets.PartitionMode(rel.Version.String()) {
			return nil, &backend.Refusal{Status: 409, Node: node, Reason: "the window's release (Proxmox VE " + rel.Version.String() + ") has no partition mode for an answer image: give the node the media answer iso"}
		}
		var res *backend.Answer
		if ma, ok := b.(backend.MediaAnswerer); ok && (k == AnswerImage || !onImage) {
			var err error
			res, err = ma.MediaAnswer(ctx, node, backend.AnswerRequest{Version: rel.Version, ClientIP: clientIP, BaseURL: rel.BaseURL, CertFingerprint: rel.CertFingerprint, CertPin: rel.CertPin})
			if err != nil {
				return nil, err
			}
		}
		if k == AnswerImage {
			return answerImage(node, res, rel, log, live(b, node))
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
		if onImage {
			c, err := bootassets.ComposePartitionISO(f, st.Size(), rel.Version.String(), st.ModTime())
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("the medium of %s: %w", node, err)
			}
			return &Medium{Image: c, Size: c.Size(), ModTime: st.ModTime(), Close: f.Close}, nil
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

// answerImage is node's answer image holding res's answer, rendered for
// rel: its Claim consumes the registration, its Close clears it.
func answerImage(node string, res *backend.Answer, rel Release, log *slog.Logger, live func(context.Context) bool) (*Medium, error) {
	if res == nil || res.Answer == nil {
		return nil, errors.New("the backend returned no answer and no error")
	}
	body, err := answer.Render(res.Answer, rel.Version, answer.RenderOptions{Header: res.Header, DropUnsupported: true, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("the answer image of %s: %w", node, err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	img, err := bootassets.AnswerImage(body, now)
	clear(body)
	if err != nil {
		return nil, fmt.Errorf("the answer image of %s: %w", node, err)
	}
	return &Medium{Image: bytes.NewReader(img), Size: int64(len(img)), ModTime: now, Claim: res.Claim, Live: live,
		Close: func() error { clear(img); return nil }}, nil
}

// AnswerImages is a backend whose nodes may read their answer from an
// answer image of their own, lent as a second medium beside the CD (the
// installer's partition mode): AnswerOnImage says node does. A backend
// that is not one puts every answer on the CD.
type AnswerImages interface {
	AnswerOnImage(ctx context.Context, node string) (bool, error)
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
