package pxe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/bootassets"
	"github.com/plasmactl/plasma-node/pxe/dhcpserver"
	"github.com/plasmactl/plasma-node/pxe/tftp"
)

// ContentTypeIPXE is the type of an iPXE script reply. iPXE itself goes by
// the script's first line, #!ipxe.
const ContentTypeIPXE = "text/plain; charset=utf-8"

// BootHandlerConfig configures a [BootHandler]. Registry, StateDir and
// BaseURL are required; the rest have the documented defaults.
type BootHandlerConfig struct {
	// Registry holds the registrations the script is chosen by.
	Registry *answer.Registry
	// StateDir holds the boot assets (in assets/<release>/) and the
	// answer server's event log.
	StateDir string
	// BaseURL is this server's concrete URL as booting machines reach it,
	// such as "http://10.77.0.2:8090", put into every script: never an
	// unspecified address and never ${next-server} (anchors B.7). Keep it
	// http unless the machines' iPXE trusts the server's certificate.
	BaseURL string
	// Release is the folder of assets/ to boot. Empty: the only release
	// staged (a folder holding [KernelName] and [InitrdName]); with none
	// or several, scripts exit and say why.
	Release string
	// ExtraKernelArgs are appended to [DefaultKernelArgs], such as
	// "console=ttyS0,115200". Each is one word of printable ASCII.
	ExtraKernelArgs []string
	// Timeline receives every script and download; nil means a new one.
	Timeline *Timeline
	// Metrics counts scripts and downloads; nil means a new one.
	Metrics *Metrics
	// EventsPath is the answer server's event log, folded into the
	// timeline whenever the page or GET /timeline is read. Empty:
	// <StateDir>/events.jsonl ([answer.EventsFileName]).
	EventsPath string
	// Logger receives every decision; nil discards them.
	Logger *slog.Logger
}

// BootHandler serves the network-boot half of a provisioning window over
// HTTP:
//
//   - GET /boot.ipxe?mac=…&platform=… the iPXE script of the machine with
//     that MAC (see [BootHandler.ServeHTTP] for how it is chosen);
//   - GET /assets/<release>/<file>[?mac=…] a boot asset, with Range
//     support, recorded in the machine's timeline;
//   - GET / a page listing pending, consumed and installed nodes with
//     their boot steps and timelines and the time left in the window,
//     refreshing itself (see [RefreshSeconds]);
//   - GET /status the same as JSON ([StatusReport]), a superset of the
//     answer handler's GET /status, which it takes over on a mux where
//     both are mounted (its pattern is the more specific);
//   - GET /timeline the timeline as JSON ([TimelineSnapshot]);
//   - GET /metrics the [Metrics] in Prometheus' text format.
//
// It serves no answers: mount an [answer.Handler] beside it.
type BootHandler struct {
	cfg      BootHandlerConfig
	log      *slog.Logger
	mux      *http.ServeMux
	assets   string
	syncMu   sync.Mutex
	ingested int
	// now returns the time of the page and GET /status; tests set it.
	now func() time.Time
}

var _ http.Handler = (*BootHandler)(nil)

var (
	assetNameRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$`)
	kernelArgRE  = regexp.MustCompile(`^[\x21-\x7e]+$`)
	errNoRelease = errors.New("no boot release staged")
)

// NewBootHandler checks cfg. It does no I/O: the assets may be staged
// later.
func NewBootHandler(cfg BootHandlerConfig) (*BootHandler, error) {
	if cfg.Registry == nil || cfg.StateDir == "" {
		return nil, errors.New("boot handler: Registry and StateDir are required")
	}
	base, err := checkBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	cfg.BaseURL = base
	if cfg.Release != "" && !assetNameRE.MatchString(cfg.Release) {
		return nil, fmt.Errorf("boot handler: release %q: want a folder name of letters, digits, '.', '_', '+' or '-'", cfg.Release)
	}
	for _, a := range cfg.ExtraKernelArgs {
		if !kernelArgRE.MatchString(a) {
			return nil, fmt.Errorf("boot handler: kernel argument %q: want one word of printable ASCII, such as console=ttyS0,115200", a)
		}
	}
	if cfg.Timeline == nil {
		cfg.Timeline = &Timeline{}
	}
	if cfg.Metrics == nil {
		cfg.Metrics = &Metrics{}
	}
	if cfg.EventsPath == "" {
		cfg.EventsPath = filepath.Join(cfg.StateDir, answer.EventsFileName)
	}
	h := &BootHandler{cfg: cfg, log: cfg.Logger, assets: filepath.Join(cfg.StateDir, AssetsDirName), now: time.Now}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	h.mux = http.NewServeMux()
	h.mux.HandleFunc("GET /boot.ipxe", h.script)
	h.mux.HandleFunc("GET /assets/{release}/{file}", h.asset)
	h.mux.HandleFunc("GET /{$}", h.page)
	h.mux.HandleFunc("GET /status", h.status)
	h.mux.HandleFunc("GET /timeline", h.timeline)
	h.mux.Handle("GET /metrics", cfg.Metrics)
	return h, nil
}

func checkBaseURL(s string) (string, error) {
	const want = "want the concrete URL machines reach this server at, such as http://10.77.0.2:8090"
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil ||
		strings.ContainsAny(s, "${} \t\r\n") {
		return "", fmt.Errorf("boot handler: base URL %q: %s", s, want)
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); (ip != nil && ip.IsUnspecified()) || host == "" {
		return "", fmt.Errorf("boot handler: base URL %q names no address a machine can reach: %s", s, want)
	}
	return strings.TrimSuffix(s, "/"), nil
}

// Patterns are the routes the handler serves, for mounting it on a
// [Server] (Config.Routes) or another mux.
func (h *BootHandler) Patterns() []string {
	return []string{"GET /boot.ipxe", "GET /assets/{release}/{file}", "GET /{$}", "GET /status", "GET /timeline", "GET /metrics"}
}

// Timeline returns the timeline the handler records to.
func (h *BootHandler) Timeline() *Timeline { return h.cfg.Timeline }

// Metrics returns the metrics the handler counts in and serves.
func (h *BootHandler) Metrics() *Metrics { return h.cfg.Metrics }

// DHCPEvent records an event of the window's proxy-DHCP server in the
// timeline and the metrics, filed under the client's MAC; set it as the
// server's OnEvent.
func (h *BootHandler) DHCPEvent(e dhcpserver.Event) {
	tl, m := h.cfg.Timeline, h.cfg.Metrics
	at := e.Time
	if at.IsZero() {
		at = tl.now()
	}
	mac := ""
	if e.MAC != nil {
		mac = e.MAC.String()
	}
	switch e.Kind {
	case dhcpserver.EventOffer, dhcpserver.EventAck:
		m.DHCPOffer()
		tl.record(at, "", mac, "", StageDHCPOffer, string(e.Kind)+" "+e.File+" for "+e.Arch)
	case dhcpserver.EventIgnored:
		m.DHCPIgnored()
	}
}

// TFTPEvent records an event of the window's TFTP server in the timeline
// and the metrics; set it as the server's OnEvent. A download, which
// names no MAC, is filed under the client's address until a boot script
// or asset request from that address names the MAC.
func (h *BootHandler) TFTPEvent(e tftp.Event) {
	tl, m := h.cfg.Timeline, h.cfg.Metrics
	at := e.Time
	if at.IsZero() {
		at = tl.now()
	}
	switch e.Kind {
	case tftp.EventSent:
		m.TFTPTransfer(e.Bytes)
		ip := ""
		if e.Peer.IsValid() {
			ip = e.Peer.Addr().String()
		}
		tl.record(at, ip, "", "", StageTFTP, e.File+" to "+e.Peer.String())
	case tftp.EventFailed:
		m.TFTPRefused()
	}
}

// ServeHTTP routes the request.
//
// GET /boot.ipxe chooses the script for the MAC address of its mac query
// (any form [answer.NormalizeMAC] accepts) with the rules of
// [answer.Match], and one more that keeps installed nodes installed:
//
//  1. a pending registration that pins the MAC is installed;
//  2. else a consumed registration that pinned the MAC, or whose
//     installer posted it, makes the machine exit to its next boot
//     device (unless a registration of the same name is pending again);
//  3. else the only pending registration, if it pins nothing, is
//     installed;
//  4. else the machine exits.
//
// A request without a mac query gets a script that chains back with
// mac=${net0/mac} and platform=${platform}; the platform query (pcbios
// or efi, else ignored) renders the script for that platform only.
// Scripts are replies with status 200 whatever the decision, so that
// iPXE runs them.
func (h *BootHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

func noStore(w http.ResponseWriter, contentType string) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "no-store")
}

func (h *BootHandler) script(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	noStore(w, ContentTypeIPXE)
	if !q.Has("mac") {
		h.cfg.Metrics.scriptRechain()
		h.log.Info("boot script without a MAC: asking iPXE again with its MAC", "client_ip", hostOf(r.RemoteAddr))
		io.WriteString(w, rechainScript(h.cfg.BaseURL))
		return
	}
	platform := q.Get("platform")
	if platform != PlatformBIOS && platform != PlatformEFI {
		platform = PlatformAny
	}
	s, err := h.choose(r.Context(), q.Get("mac"))
	if err != nil {
		h.log.Error("cannot choose a boot script", "err", err)
		http.Error(w, "cannot read the registrations; see the server log", http.StatusInternalServerError)
		return
	}
	s.BaseURL, s.Platform = h.cfg.BaseURL, platform
	install := s.Node != ""
	if r.Method == http.MethodGet {
		h.cfg.Metrics.ScriptServed(install)
		detail := "exit: " + s.Reason
		if install {
			detail = fmt.Sprintf("install release %s (%s)", s.Release, s.Reason)
			if platform != PlatformAny {
				detail += " for " + platform
			}
		}
		h.cfg.Timeline.RecordFrom(hostOf(r.RemoteAddr), s.MAC, s.Node, StageScript, detail)
	}
	if install {
		h.log.Info("boot script: install", "node", s.Node, "mac", s.MAC, "release", s.Release, "match", s.Reason, "platform", platform)
		s.Reason = ""
	} else {
		h.log.Info("boot script: exit", "mac", s.MAC, "reason", s.Reason)
	}
	io.WriteString(w, IPXEScript(s))
}

// choose applies the rules of ServeHTTP. The returned script has Node set
// to install it, and Reason saying why (the match reason, or why not).
func (h *BootHandler) choose(ctx context.Context, rawMAC string) (BootScript, error) {
	mac, err := answer.NormalizeMAC(rawMAC)
	if err != nil {
		return BootScript{Reason: "the mac parameter is not a MAC address"}, nil
	}
	s := BootScript{MAC: mac}
	pending, err := h.cfg.Registry.Pending(ctx)
	if err != nil {
		return s, err
	}
	reg, reason, matchErr := answer.Match(pending, []string{mac}, "", "")
	if matchErr != nil || reason != answer.MatchMAC {
		// Rule 2 comes before the only-pending rule: an installed node
		// must not be taken for the next unpinned registration.
		consumed, err := h.cfg.Registry.Consumed(ctx)
		if err != nil {
			return s, err
		}
		if c, ok := consumedBy(consumed, pending, mac); ok {
			at := ""
			if c.Consumed != nil && !c.Consumed.Time.IsZero() {
				at = " at " + c.Consumed.Time.UTC().Format(time.RFC3339)
			}
			s.Reason = fmt.Sprintf("registration %s was consumed%s: installed or installing; register it again to reinstall", c.Name, at)
			return s, nil
		}
	}
	if matchErr != nil {
		s.Reason = "no pending registration matches MAC " + mac
		return s, nil
	}
	release, err := h.release(ctx)
	if err != nil {
		s.Reason = fmt.Sprintf("node %s is pending but %v", reg.Name, err)
		h.log.Warn("a pending node cannot boot: no release to boot", "node", reg.Name, "mac", mac, "err", err)
		return s, nil
	}
	s.Node, s.Release, s.Reason = reg.Name, release, "matched by "+string(reason)
	args := []string{DefaultKernelArgs}
	if reg.BootDisk.Kind == answer.BootDiskAsk {
		args = append(args, bootassets.AskDiskKernelArg)
	}
	s.KernelArgs = strings.Join(append(args, h.cfg.ExtraKernelArgs...), " ")
	return s, nil
}

// consumedBy finds the consumed registration that pinned mac or whose
// installer posted it, skipping names that are pending again.
func consumedBy(consumed, pending []answer.Registration, mac string) (answer.Registration, bool) {
	for _, c := range consumed {
		if slices.ContainsFunc(pending, func(p answer.Registration) bool { return p.Name == c.Name }) {
			continue
		}
		if slices.Contains(c.KnownMACs(), mac) {
			return c, true
		}
	}
	return answer.Registration{}, false
}

// release returns the release to boot, checking that its kernel and
// initrd are staged. The error says why not, for the exit script.
func (h *BootHandler) release(ctx context.Context) (string, error) {
	if h.cfg.Release != "" {
		root, err := os.OpenRoot(h.assets)
		if err != nil {
			return "", fmt.Errorf("%w: %s is missing (run prepare)", errNoRelease, AssetsDirName)
		}
		defer root.Close()
		if !bootassets.Staged(root, h.cfg.Release) {
			return "", fmt.Errorf("%w: release %s lacks %s or %s (run prepare)", errNoRelease, h.cfg.Release, KernelName, InitrdName)
		}
		return h.cfg.Release, nil
	}
	rs, err := bootassets.StagedReleases(ctx, h.cfg.StateDir)
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

func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// syncEvents folds the answer server's new events into the timeline.
func (h *BootHandler) syncEvents() {
	h.syncMu.Lock()
	defer h.syncMu.Unlock()
	evs, err := answer.ReadEvents(h.cfg.EventsPath)
	if err != nil {
		h.log.Warn("cannot read the answer event log", "err", err)
		return
	}
	if len(evs) < h.ingested { // the log was replaced
		h.ingested = 0
	}
	h.cfg.Timeline.Ingest(evs[h.ingested:]...)
	h.ingested = len(evs)
}

func (h *BootHandler) timeline(w http.ResponseWriter, _ *http.Request) {
	h.syncEvents()
	noStore(w, "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(h.cfg.Timeline.Snapshot())
}
