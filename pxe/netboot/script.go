package netboot

import (
	"github.com/plasmactl/plasma-node/pxe/bootassets"
	"github.com/plasmactl/plasma-node/pxe/events"

	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

var errNoRelease = errors.New("no boot release staged")

func (h *Handler) script(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	noStore(w, contentTypeIPXE)
	if !q.Has("mac") {
		h.cfg.Metrics.scriptRechain()
		h.log.Info("boot script without a MAC: asking iPXE again with its MAC", "client_ip", hostOf(r.RemoteAddr))
		io.WriteString(w, rechainScript(h.baseFor(hostOf(r.RemoteAddr))))
		return
	}
	platform := q.Get("platform")
	if platform != PlatformBIOS && platform != PlatformEFI {
		platform = PlatformAny
	}
	s, err := h.choose(r.Context(), h.baseFor(hostOf(r.RemoteAddr)), q.Get("mac"))
	if err != nil {
		h.log.Error("cannot choose a boot script", "err", err)
		http.Error(w, "cannot decide the boot script; see the server log", http.StatusInternalServerError)
		return
	}
	s.Platform = platform
	install := s.Node != "" || s.Discovery
	if r.Method == http.MethodGet {
		h.cfg.Metrics.scriptServed(install)
		detail := "exit: " + s.Reason
		switch {
		case s.Discovery:
			detail = fmt.Sprintf("discovery boot, release %s", s.Release)
		case install:
			detail = fmt.Sprintf("install release %s (%s)", s.Release, s.Reason)
			if platform != PlatformAny {
				detail += " for " + platform
			}
		}
		h.cfg.Timeline.RecordFrom(hostOf(r.RemoteAddr), s.MAC, s.Node, events.Script, detail)
	}
	switch {
	case s.Discovery:
		h.log.Info("boot script: discovery", "mac", s.MAC, "release", s.Release, "platform", platform)
		s.Reason = ""
	case install:
		h.log.Info("boot script: install", "node", s.Node, "mac", s.MAC, "release", s.Release, "match", s.Reason, "platform", platform)
		s.Reason = ""
	default:
		h.log.Info("boot script: exit", "mac", s.MAC, "reason", s.Reason)
	}
	io.WriteString(w, IPXEScript(s))
}

// choose asks the backend and checks the release. The returned script
// names base, has Node set to install it, and Reason saying why (the
// backend's reason, or why not).
func (h *Handler) choose(ctx context.Context, base, rawMAC string) (BootScript, error) {
	mac, err := normalizeMAC(rawMAC)
	if err != nil {
		return BootScript{BaseURL: base, Reason: "the mac parameter is not a MAC address"}, nil
	}
	s := BootScript{MAC: mac, BaseURL: base}
	d, err := h.cfg.Backend.Boot(ctx, mac)
	if err != nil {
		return s, err
	}
	if d.Node == "" || validateNodeName(d.Node) != nil {
		s.Reason = d.Reason
		if d.Node != "" {
			s.Reason = "the backend named no valid node"
		}
		if d.Node == "" && d.Stranger && h.cfg.Discovery != nil {
			return h.discoveryScript(ctx, s), nil
		}
		return s, nil
	}
	release, err := h.release(ctx)
	if err != nil {
		s.Reason = fmt.Sprintf("node %s is pending but %v", d.Node, err)
		h.log.Warn("a pending node cannot boot: no release to boot", "node", d.Node, "mac", mac, "err", err)
		return s, nil
	}
	args := []string{defaultKernelArgs}
	if d.AskDisk {
		args = append(args, bootassets.AskDiskKernelArg)
	}
	for _, a := range d.KernelArgs {
		if !kernelArgRE.MatchString(a) {
			return s, fmt.Errorf("backend kernel argument %q for %s is not one word of printable ASCII", a, d.Node)
		}
	}
	args = append(append(args, d.KernelArgs...), h.cfg.ExtraKernelArgs...)
	s.Node, s.Release, s.Reason, s.KernelArgs = d.Node, release, d.Reason, strings.Join(args, " ")
	return s, nil
}

// release returns the release to boot, checking that its kernel and
// initrd are staged. The error says why not, for the exit script.
func (h *Handler) release(ctx context.Context) (string, error) {
	if h.cfg.AssetsDir == "" {
		return "", fmt.Errorf("%w (run prepare)", errNoRelease)
	}
	if h.cfg.Release != "" {
		root, err := os.OpenRoot(h.cfg.AssetsDir)
		if err != nil {
			return "", fmt.Errorf("%w: the assets folder is missing (run prepare)", errNoRelease)
		}
		defer root.Close()
		if !bootassets.Staged(root, h.cfg.Release) {
			return "", fmt.Errorf("%w: release %s lacks %s or %s (run prepare)", errNoRelease, h.cfg.Release, bootassets.AssetKernel, bootassets.AssetNetbootInitrd)
		}
		return h.cfg.Release, nil
	}
	rs, err := bootassets.StagedIn(ctx, h.cfg.AssetsDir)
	if err != nil {
		return "", fmt.Errorf("%w (run prepare)", errNoRelease)
	}
	switch len(rs) {
	case 0:
		return "", fmt.Errorf("%w (run prepare)", errNoRelease)
	case 1:
		return rs[0], nil
	default:
		return "", fmt.Errorf("%w: %d releases are staged (%s); choose one", errNoRelease, len(rs), strings.Join(rs, ", "))
	}
}

// ipxeFiles serves the iPXE binaries of dir over HTTP, for UEFI
// HTTP-boot clients (offered <base>/ipxe/<binary>). It serves only
// regular files inside dir: os.Root refuses paths and symlinks that leave
// it, and folders are not listed. The folder is opened per request, so it
// may be filled after the handler is made.
// served, when set, is called for each file about to be served.
func ipxeFiles(dir string, served func(r *http.Request, name string)) http.Handler {
	return http.StripPrefix("/ipxe", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		name := strings.TrimPrefix(req.URL.Path, "/")
		if name == "" || strings.HasSuffix(name, "/") || strings.ContainsRune(name, 0) {
			http.NotFound(w, req)
			return
		}
		r, err := os.OpenRoot(dir)
		if err != nil {
			http.NotFound(w, req)
			return
		}
		defer r.Close()
		if st, err := r.Stat(name); err != nil || !st.Mode().IsRegular() {
			http.NotFound(w, req)
			return
		}
		if served != nil {
			served(req, name)
		}
		http.FileServerFS(r.FS()).ServeHTTP(w, req)
	}))
}
