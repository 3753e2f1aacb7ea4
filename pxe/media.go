package pxe

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/bootassets"
	"github.com/plasmactl/plasma-node/pxe/vmedia"
)

// setupMedia serves the virtual media of the state folder's armed nodes
// at [vmedia.PathPrefix] (package vmedia), made of the release the
// window boots: the window's staged release (Config.Release, else the
// only one, else the only one not generic). URLs armed before the window
// opened (a killed window's) are cleared; every URL dies as it closes.
// Without a release staged, media are refused.
func (s *Server) setupMedia(ctx context.Context, a *assembly, b backend.Backend, mux *http.ServeMux) error {
	if s.cfg.StateDir == "" {
		return nil
	}
	if err := vmedia.Clear(s.cfg.StateDir); err != nil {
		return err
	}
	rels, err := bootassets.ListReleases(ctx, s.cfg.StateDir)
	if err != nil {
		s.log.Warn("virtual media are not served: the staged releases cannot be read", "err", err)
		return nil
	}
	var rel *bootassets.Release
	for _, r := range rels {
		switch {
		case r.Name == s.cfg.Release:
			rel = r
		case s.cfg.Release == "" && (len(rels) == 1 || !strings.HasSuffix(r.Name, "-generic")) && rel == nil:
			rel = r
		}
	}
	media := func(context.Context, string, vmedia.Kind, string) (*vmedia.Medium, error) {
		return nil, fmt.Errorf("%w: no release is staged to make media of (node-provisioner prepare)", backend.ErrNoAnswer)
	}
	if rel != nil {
		v, err := answer.ParseVersion(rel.Version)
		if err != nil {
			v = answer.DefaultVersion
		}
		a.mediaInstaller = v.String()
		media = vmedia.MediaOf(b, vmedia.Release{Dir: rel.Dir, Version: v, BaseURL: strings.TrimSuffix(a.answerURL, "/answer"), CertFingerprint: a.fp, CertPin: a.pin, Logger: s.log})
	}
	h := vmedia.New(vmedia.Config{StateDir: s.cfg.StateDir, WindowPID: os.Getpid(), Media: media, Logger: s.log})
	dir := s.cfg.StateDir
	a.closers = append(a.closers, func() error { h.Close(); return vmedia.Clear(dir) })
	return register(mux, vmedia.PathPrefix, h)
}
