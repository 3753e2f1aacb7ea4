package netboot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/internal/hostport"
	"github.com/plasmactl/plasma-node/pxe/discovery"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/events"
)

// contentTypeIPXE is the type of an iPXE script reply. iPXE itself goes by
// the script's first line, #!ipxe.
const contentTypeIPXE = "text/plain; charset=utf-8"

// Config configures a [Handler]. Backend and BaseURL are required; the
// rest have the documented defaults.
type Config struct {
	// Backend decides which machine boots what and answers installers.
	Backend backend.Backend
	// MaxRefusalDelay is the longest an answer request of an address
	// that keeps being refused waits before it is looked at (see
	// refusals.go); its reply is unchanged. Zero: DefaultMaxRefusalDelay;
	// negative: no delay.
	MaxRefusalDelay time.Duration
	// WebhookReadTimeout bounds the time a webhook body may take to
	// arrive in full. Zero: [WebhookReadTimeout].
	WebhookReadTimeout time.Duration
	// BaseURL is this server's concrete URL as booting machines reach it,
	// such as "http://10.77.0.2:8090", put into every script: never an
	// unspecified address and never ${next-server} (anchors B.7). Keep it
	// http unless the machines' iPXE trusts the server's certificate.
	BaseURL string
	// BaseURL6, on a dual-stack segment, is this server's URL for the
	// machines that reach it over IPv6, such as "http://[2001:db8::2]:8090":
	// a request that came over IPv6 (not IPv4-mapped) gets scripts naming
	// it, so that a client on IPv6 alone is never sent to an IPv4 URL.
	// Empty: BaseURL for every request.
	BaseURL6 string
	// AnswerBaseURL is the URL installers reach this server at, for the
	// first-boot and webhook URLs in answers. Empty: taken from each
	// answer request (its scheme and Host).
	AnswerBaseURL string
	// CertFingerprint is the fingerprint of the server's TLS certificate:
	// answers served over HTTPS pin it for their first-boot and webhook
	// URLs. Empty when the server has no certificate.
	CertFingerprint string
	// CertPin is the public key pin of the server's TLS certificate
	// (pxe/tlscert's PublicKeyPin): answers served over HTTPS hand it to
	// the first-boot script. Empty when the server has no certificate.
	CertPin string
	// AnswerTokens returns the bearer tokens an installer may send with
	// POST /answer ("Authorization: Bearer <name>:<secret>", 9.2 ISOs
	// prepared with an answer token); it is called for each request, so a
	// release prepared while the window is open counts. No tokens (or a
	// nil func): the request needs none, as older installers send none.
	// An error refuses the request (fail closed). The tokens are compared
	// in constant time and never logged.
	AnswerTokens func(ctx context.Context) ([]string, error)
	// AssetsDir is the folder of staged releases, one folder each holding
	// [bootassets.AssetKernel] and [bootassets.AssetNetbootInitrd]
	// (node-provisioner's <state-dir>/assets). Empty: none, and install
	// scripts exit saying so.
	AssetsDir string
	// Release is the folder of AssetsDir to boot. Empty: the only release
	// staged; with none or several, scripts exit and say why.
	Release string
	// ExtraKernelArgs are appended to defaultKernelArgs, such as
	// "console=ttyS0,115200". Each is one word of printable ASCII.
	ExtraKernelArgs []string
	// IPXEDir, when set, is served under /ipxe/ (the iPXE binaries, for
	// UEFI HTTP-boot clients).
	IPXEDir string
	// Timeline receives every boot step; nil means a new one.
	Timeline *Timeline
	// Metrics counts what is served; nil means a new one.
	Metrics *Metrics
	// Record, when set, takes the answer-side events (answers, refusals,
	// first-boot, the webhook) instead of the backend's
	// [backend.Recorder]: the window queues them behind its boot steps,
	// so the log keeps one order. Its error is logged.
	Record func(ctx context.Context, e backend.Event) error
	// Logger receives every decision; nil discards them.
	Logger *slog.Logger
	// Now returns the time of events and of the page; nil means time.Now.
	Now func() time.Time
	// Discovery, when set, makes the window a discovery window (see
	// [Discovery]); nil: strangers exit and POST /discovery gets 404.
	Discovery *Discovery
}

// Handler serves the HTTP side of a provisioning window:
//
//   - GET /boot.ipxe?mac=…&platform=… the iPXE script of the machine with
//     that MAC, as [backend.Backend.Boot] decides (see [Handler.ServeHTTP]);
//   - GET /assets/<release>/<file>[?mac=…] a boot asset, with Range
//     support, recorded in the machine's timeline;
//   - GET /ipxe/<binary> the iPXE binaries, with Config.IPXEDir;
//   - POST /answer the installer's answer ([backend.Backend.Answer]),
//     rendered for the installer's version;
//   - POST /discovery a discovery agent's report, with Config.Discovery
//     (see [Discovery]);
//   - GET /first-boot/<token> and POST /webhook/<token> the installer's
//     calls back, when the backend is a [backend.OneShot];
//   - POST /first-boot-report/<token> what the node's first-boot hook
//     did with its data pools, when the backend is a
//     [backend.FirstBootReporter];
//   - GET / a page listing the nodes with their boot steps and timelines
//     and the time left in the window, refreshing itself (see
//     refreshSeconds);
//   - GET /status the same as JSON ([StatusReport]);
//   - GET /timeline the timeline as JSON ([TimelineSnapshot]);
//   - GET /metrics the [Metrics] in Prometheus' text format.
//
// The page, GET /status and GET /timeline are read by anyone who reaches
// the window: they show every MAC, serial, UUID and address masked to
// its last characters ("…:ad:02", "….17"), whether of a registration, an
// install report, a discovered machine or a stranger, in fields and in
// event details alike. [Handler.FullPage] and [Handler.FullStatus] show
// them whole, for a caller that authenticates the reader (the daemon's
// API, for a read token).
//
// Any other request gets 404 and is recorded. Every answer-side request
// is reported to the backend when it is a [backend.Recorder], and to the
// timeline.
type Handler struct {
	cfg      Config
	log      *slog.Logger
	mux      *http.ServeMux
	refusals *refusals
	offers   offerDetails
	// render renders an answer: answer.Render, counted by tests.
	render func(*answer.Answer, answer.Version, answer.RenderOptions) ([]byte, error)
}

var _ http.Handler = (*Handler)(nil)

var (
	assetNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$`)
	kernelArgRE = regexp.MustCompile(`^[\x21-\x7e]+$`)
)

// New checks cfg. It does no I/O: the assets may be staged later.
func New(cfg Config) (*Handler, error) {
	if cfg.Backend == nil {
		return nil, errors.New("netboot: a backend is required")
	}
	base, err := checkBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	cfg.BaseURL = base
	if cfg.BaseURL6 != "" {
		if cfg.BaseURL6, err = checkBaseURL6(cfg.BaseURL6); err != nil {
			return nil, err
		}
	}
	if cfg.Release != "" && !assetNameRE.MatchString(cfg.Release) {
		return nil, fmt.Errorf("netboot: release %q: want a folder name of letters, digits, '.', '_', '+' or '-'", cfg.Release)
	}
	for _, a := range cfg.ExtraKernelArgs {
		if !kernelArgRE.MatchString(a) {
			return nil, fmt.Errorf("netboot: kernel argument %q: want one word of printable ASCII, such as console=ttyS0,115200", a)
		}
	}
	if cfg.Timeline == nil {
		cfg.Timeline = &Timeline{}
	}
	if cfg.Metrics == nil {
		cfg.Metrics = &Metrics{}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Discovery != nil {
		if err := cfg.Discovery.check(); err != nil {
			return nil, err
		}
	}
	if cfg.Timeline.Now == nil {
		cfg.Timeline.Now = cfg.Now
	}
	if cfg.MaxRefusalDelay == 0 {
		cfg.MaxRefusalDelay = DefaultMaxRefusalDelay
	}
	h := &Handler{cfg: cfg, log: cfg.Logger, refusals: newRefusals(cfg.MaxRefusalDelay), render: answer.Render}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	h.mux = http.NewServeMux()
	h.mux.HandleFunc("GET /boot.ipxe", h.script)
	h.mux.HandleFunc("GET "+grubScriptPath, h.grubScript)
	h.mux.HandleFunc("GET /"+GrubConfigName, h.grubConfig)
	h.mux.HandleFunc("GET /assets/{release}/{file}", h.asset)
	if cfg.IPXEDir != "" {
		h.mux.Handle("GET /ipxe/", ipxeFiles(cfg.IPXEDir, h.bootFileServed))
	}
	h.mux.HandleFunc("/answer", h.answer)
	h.mux.HandleFunc("/answer/", h.answer)
	h.mux.HandleFunc("/first-boot/{token}", h.firstBoot)
	h.mux.HandleFunc("/webhook/{token}", h.webhook)
	h.mux.HandleFunc("/first-boot-report/{token}", h.firstBootReport)
	h.mux.HandleFunc(discovery.PostPath, h.discoveryPost)
	h.mux.HandleFunc("GET /{$}", h.page)
	h.mux.HandleFunc("GET /status", h.status)
	h.mux.HandleFunc("GET /timeline", h.timeline)
	h.mux.Handle("GET /metrics", cfg.Metrics)
	h.mux.HandleFunc("/", h.unknown)
	return h, nil
}

func checkBaseURL(s string) (string, error) {
	const want = "want the concrete URL machines reach this server at, such as http://10.77.0.2:8090"
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil ||
		strings.ContainsAny(s, "${} \t\r\n") {
		return "", fmt.Errorf("netboot: base URL %q: %s", s, want)
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); (ip != nil && ip.IsUnspecified()) || host == "" {
		return "", fmt.Errorf("netboot: base URL %q names no address a machine can reach: %s", s, want)
	}
	if err := hostport.CheckAdvertised(host); err != nil {
		return "", fmt.Errorf("netboot: base URL %q: %w", s, err)
	}
	return strings.TrimSuffix(s, "/"), nil
}

// checkBaseURL6 checks an IPv6 base URL as [checkBaseURL] does, and that
// it names an IPv6 address.
func checkBaseURL6(s string) (string, error) {
	base, err := checkBaseURL(s)
	if err != nil {
		return "", err
	}
	u, _ := url.Parse(base)
	if ip, err := netip.ParseAddr(u.Hostname()); err != nil || !ip.Is6() || ip.Is4In6() {
		return "", fmt.Errorf("netboot: IPv6 base URL %q: want the URL of this server's IPv6 address, such as http://[2001:db8::2]:8090", s)
	}
	return base, nil
}

// baseFor is the base URL for a request from the client at ip (an
// address without port): BaseURL6 for an IPv6 client when there is one,
// else BaseURL.
func (h *Handler) baseFor(ip string) string {
	if h.cfg.BaseURL6 == "" {
		return h.cfg.BaseURL
	}
	if a, err := netip.ParseAddr(ip); err == nil && a.Is6() && !a.Is4In6() {
		return h.cfg.BaseURL6
	}
	return h.cfg.BaseURL
}

// Timeline returns the timeline the handler records to.
func (h *Handler) Timeline() *Timeline { return h.cfg.Timeline }

// Metrics returns the metrics the handler counts in and serves.
func (h *Handler) Metrics() *Metrics { return h.cfg.Metrics }

// LoadHistory folds the backend's earlier events into the timeline, when
// the backend is a [backend.Recorder]; call it once, before serving.
func (h *Handler) LoadHistory(ctx context.Context) error {
	rec, ok := h.cfg.Backend.(backend.Recorder)
	if !ok {
		return nil
	}
	evs, err := rec.History(ctx)
	if err != nil {
		return fmt.Errorf("netboot: read the event history: %w", err)
	}
	h.cfg.Timeline.Ingest(evs...)
	return nil
}

// record reports an answer-side event to the timeline and the backend.
func (h *Handler) record(ctx context.Context, e backend.Event) {
	if e.Time.IsZero() {
		e.Time = h.cfg.Now().UTC()
	}
	e.Node, e.MAC, e.Serial, e.ClientIP, e.Detail = clip(e.Node), clip(e.MAC), clip(e.Serial), clip(e.ClientIP), clip(e.Detail)
	h.cfg.Timeline.Ingest(e)
	if h.cfg.Record != nil {
		if err := h.cfg.Record(context.WithoutCancel(ctx), e); err != nil {
			h.log.Error("cannot record the event", "kind", e.Kind, "node", e.Node, "err", err)
		}
		return
	}
	if rec, ok := h.cfg.Backend.(backend.Recorder); ok {
		if err := rec.Record(context.WithoutCancel(ctx), e); err != nil {
			h.log.Error("cannot record the event", "kind", e.Kind, "node", e.Node, "err", err)
		}
	}
}

// ServeHTTP routes the request.
//
// GET /boot.ipxe asks the backend what the machine with the MAC address
// of its mac query boots: an install script for the node it names, with
// the release's kernel and initrd, or a script that exits to the next
// boot device, saying why. A request without a mac query gets a script
// that chains back with mac=${netX/mac} (the NIC iPXE booted from, which
// ${net0/mac} need not be on a machine with several NICs) and
// platform=${platform}; the platform query (pcbios or efi, else ignored)
// renders the script for that platform only. Scripts are replies with status 200 whatever the
// decision, so that iPXE runs them.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

func noStore(w http.ResponseWriter, contentType string) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "no-store")
}

func reply(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, msg+"\n")
}

func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func (h *Handler) unknown(w http.ResponseWriter, r *http.Request) {
	h.record(r.Context(), backend.Event{Kind: events.Refused, ClientIP: hostOf(r.RemoteAddr), Status: http.StatusNotFound,
		Detail: "unknown endpoint " + r.Method + " " + truncate(r.URL.Path, 200)})
	reply(w, http.StatusNotFound, "unknown endpoint")
}

// timeline serves the timeline masked as the page is.
func (h *Handler) timeline(w http.ResponseWriter, r *http.Request) {
	nodes, recs, err := h.identified(r.Context())
	if err != nil {
		h.log.Error("timeline failed", "err", err)
		http.Error(w, "cannot read the registrations; see the server log", http.StatusInternalServerError)
		return
	}
	noStore(w, "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(newRedactor(nodes, recs).snapshot(h.cfg.Timeline.Snapshot()))
}
