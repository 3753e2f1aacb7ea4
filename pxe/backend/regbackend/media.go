package regbackend

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

var _ backend.MediaAnswerer = (*Backend)(nil)

// AnswerOnImage reports whether node's installer reads its answer from
// an answer image beside its CD: a registration booting from virtual
// media with the media answer partition (its own, else the site's),
// pending or consumed (its BMC may read the CD after the answer image
// consumed it). A node not registered does not (vmedia.AnswerImages).
func (b *Backend) AnswerOnImage(ctx context.Context, node string) (bool, error) {
	reg, err := b.cfg.Store.Get(ctx, node)
	if errors.Is(err, registry.ErrNotFound) {
		consumed, cerr := b.cfg.Store.Consumed(ctx)
		if cerr != nil {
			return false, fmt.Errorf("read consumed registrations: %w", cerr)
		}
		i := slices.IndexFunc(consumed, func(r registry.Registration) bool { return r.Name == node })
		if i < 0 {
			return false, nil
		}
		reg, err = consumed[i], nil
	}
	if err != nil {
		return false, fmt.Errorf("read registration %s: %w", node, err)
	}
	site, err := b.cfg.Site()
	if err != nil {
		return false, fmt.Errorf("read site settings: %w", err)
	}
	m, a := site.BootOf(reg)
	return m == registry.BootVirtualMedia && a == registry.MediaAnswerPartition, nil
}

// MediaAnswer builds the answer of the pending registration node for the
// virtual medium its BMC fetches (boot method virtual-media, media answer
// iso; or partition, for its answer image), with a new root password,
// changing nothing. Its Claim consumes
// the registration as [Backend.Answer]'s does, recording req.ClientIP
// (the BMC's address) as the address served; the window calls it on the
// medium's first fetch. The registration stays undelivered until its
// installer reports installed: whether the installer read the medium is
// not seen. A pending node whose installer fetches its answer from the
// window (media answer http) gets nil and no error: its medium holds no
// answer. A node that is not pending, or does not boot from virtual
// media, is refused with [backend.ErrNoAnswer].
func (b *Backend) MediaAnswer(ctx context.Context, node string, req backend.AnswerRequest) (*backend.Answer, error) {
	reg, err := b.cfg.Store.Get(ctx, node)
	if errors.Is(err, registry.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s is not pending", backend.ErrNoAnswer, node)
	}
	if err != nil {
		return nil, fmt.Errorf("read registration %s: %w", node, err)
	}
	site, err := b.cfg.Site()
	if err != nil {
		return nil, fmt.Errorf("read site settings: %w", err)
	}
	switch m, a := site.BootOf(reg); {
	case m != registry.BootVirtualMedia:
		return nil, fmt.Errorf("%w: %s does not boot from virtual media", backend.ErrNoAnswer, node)
	case a == registry.MediaAnswerHTTP:
		return nil, nil // its installer fetches the answer from the window
	}
	if reg.BootDisk.Kind == answer.BootDiskAsk {
		return nil, &backend.Refusal{Status: 409, Node: node, Reason: "registration expects a console-chosen boot disk, which an answer on the medium cannot take: give it a boot disk"}
	}
	if req.Info == nil {
		req.Info = &answer.SystemInfo{}
	}
	a, files, pw, err := b.build(req, reg, site, answer.BootDisk{})
	if err != nil {
		return nil, fmt.Errorf("build the answer of %s: %w", node, err)
	}
	where := "on its virtual medium"
	if _, ma := site.BootOf(reg); ma == registry.MediaAnswerPartition {
		where = "on its answer image"
	}
	return b.answerOf(req, reg, a, files, pw, where+"; installer "+req.Version.String()), nil
}

// Pending reports whether node has a pending registration: one whose
// medium was claimed and that is pending again was re-armed, and the
// window stops serving the old medium (vmedia.Pending).
func (b *Backend) Pending(ctx context.Context, node string) (bool, error) {
	_, err := b.cfg.Store.Get(ctx, node)
	if errors.Is(err, registry.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}
