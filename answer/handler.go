package answer

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
)

// MaxBodySize is the largest system-info body the handler reads: 1 MiB.
const MaxBodySize = 1 << 20

// FirstBootDirName is the folder of the state folder that holds the
// first-boot scripts and webhook tokens of answered nodes.
const FirstBootDirName = "first-boot"

// ContentTypeTOML is the type of an answer reply.
const ContentTypeTOML = "application/toml"

// HandlerConfig configures a [Handler]. Registry, Secrets and StateDir
// are required.
type HandlerConfig struct {
	// Registry holds the registrations, the allowlist.
	Registry *Registry
	// Secrets receives each answered node's root password.
	Secrets *SecretStore
	// StateDir holds the first-boot scripts (in first-boot/) and, unless
	// Events is set, the event log.
	StateDir string
	// Site returns the shared settings; it is called on every request so
	// that a changed settings file takes effect. Nil means defaults.
	Site func() (Site, error)
	// Events receives a record of every request. Nil opens
	// <StateDir>/events.jsonl.
	Events *EventLog
	// BaseURL is the URL the installer reaches this server at, for the
	// first-boot and webhook URLs in answers (for example
	// "http://10.0.0.2:8090"). Empty: taken from each request's Host.
	BaseURL string
	// CertFingerprint is the fingerprint of the server's TLS certificate
	// ([BuildOptions.CertFingerprint]): answers served over HTTPS pin it
	// for their first-boot and webhook URLs.
	CertFingerprint string
	// OnInstalled, if set, is called when a node's installer reports
	// success through the post-installation webhook.
	OnInstalled func(node string)
	// Logger receives refusals and answers; nil discards them.
	Logger *slog.Logger
	// Now returns the time; nil means time.Now.
	Now func() time.Time
}

// Handler serves the Proxmox installer: POST /answer returns a registered
// machine's answer once, GET /first-boot/<token> its first-boot script
// once, and POST /webhook/<token> records the installer's report. Every
// request is written to the event log; GET /status lists the nodes. It
// never logs or records a secret.
type Handler struct {
	cfg  HandlerConfig
	log  *slog.Logger
	mux  *http.ServeMux
	dir  string
	ownE bool
}

var _ http.Handler = (*Handler)(nil)

// NewHandler checks cfg and creates the first-boot folder (0700).
func NewHandler(cfg HandlerConfig) (*Handler, error) {
	if cfg.Registry == nil || cfg.Secrets == nil || cfg.StateDir == "" {
		return nil, errors.New("answer handler: Registry, Secrets and StateDir are required")
	}
	h := &Handler{cfg: cfg, log: cfg.Logger, dir: filepath.Join(cfg.StateDir, FirstBootDirName)}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.cfg.Now == nil {
		h.cfg.Now = time.Now
	}
	if h.cfg.Site == nil {
		h.cfg.Site = func() (Site, error) { return Site{}, nil }
	}
	if err := os.MkdirAll(h.dir, 0o700); err != nil {
		return nil, fmt.Errorf("answer handler: %w", err)
	}
	if h.cfg.Events == nil {
		ev, err := OpenEventLog(filepath.Join(cfg.StateDir, EventsFileName))
		if err != nil {
			return nil, err
		}
		h.cfg.Events, h.ownE = ev, true
	}
	h.mux = http.NewServeMux()
	h.mux.HandleFunc("/answer", h.answer)
	h.mux.HandleFunc("/answer/", h.answer)
	h.mux.HandleFunc("/first-boot/{token}", h.firstBoot)
	h.mux.HandleFunc("/webhook/{token}", h.webhook)
	h.mux.HandleFunc("GET /status", h.status)
	h.mux.HandleFunc("/", h.unknown)
	return h, nil
}

// Close closes the event log the handler opened itself.
func (h *Handler) Close() error {
	if h.ownE {
		return h.cfg.Events.Close()
	}
	return nil
}

// Patterns are the paths the handler serves, for mounting it on a mux. It
// takes every path, so that requests for unknown ones are recorded too.
func (h *Handler) Patterns() []string {
	return []string{"/"}
}

// ServeHTTP routes the request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

func (h *Handler) record(e Event) {
	if err := h.cfg.Events.Append(e); err != nil {
		h.log.Error("cannot write the event log", "err", err)
	}
}

func reply(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, msg+"\n")
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

var bootDiskParamRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func (h *Handler) answer(w http.ResponseWriter, r *http.Request) {
	ip := clientIP(r)
	refuse := func(status int, msg string, e Event) {
		e.Kind, e.Status, e.ClientIP = EventRefused, status, ip
		if e.Detail == "" {
			e.Detail = msg
		}
		h.record(e)
		h.log.Warn("answer refused", "status", status, "reason", msg, "client_ip", ip, "macs", e.MAC, "serial", e.Serial)
		reply(w, status, msg)
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		refuse(http.StatusMethodNotAllowed, "method not allowed; POST the system info", Event{})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodySize))
	if err != nil {
		refuse(http.StatusBadRequest, fmt.Sprintf("system-info body over %d bytes or unreadable", MaxBodySize), Event{})
		return
	}
	si, err := ParseSystemInfo(body, r.Header.Get("Content-Type"))
	if err != nil {
		msg := "invalid system-info JSON: want a JSON object"
		if ct := r.Header.Get("Content-Type"); ct != "" && !strings.Contains(strings.ToLower(ct), "json") {
			msg += fmt.Sprintf(" sent as application/json (got Content-Type %q)", truncate(ct, 80))
		}
		refuse(http.StatusBadRequest, msg, Event{})
		return
	}
	macs, serial, uuid := si.MACs(), si.Serial(), si.UUID()
	ev := Event{MAC: strings.Join(macs, ","), Serial: serial}
	var override BootDisk
	if q := r.URL.Query(); q.Has("bootdisk") {
		v := q.Get("bootdisk")
		bd, perr := ParseBootDisk(v)
		if !bootDiskParamRE.MatchString(v) || perr != nil || bd.Kind == BootDiskAsk {
			refuse(http.StatusBadRequest, "invalid bootdisk parameter: want a disk name such as sda or nvme0n1, or a serial", ev)
			return
		}
		override = bd
	}
	version, ok := si.Version()
	if !ok {
		version = DefaultVersion
	}
	if !version.Supported() {
		refuse(http.StatusBadRequest, fmt.Sprintf("installer version %s is not supported (want %s or later)", version, MinVersion), ev)
		return
	}
	ctx := r.Context()
	pending, err := h.cfg.Registry.Pending(ctx)
	if err != nil {
		h.fail(w, ev, ip, "read registrations", err)
		return
	}
	reg, reason, err := Match(pending, macs, serial, uuid)
	if err != nil {
		refuse(http.StatusNotFound, "no pending registration matches this machine", ev)
		return
	}
	ev.Node = reg.Name
	if reg.BootDisk.Kind == BootDiskAsk && override.Kind == BootDiskAsk {
		refuse(http.StatusConflict, "registration expects a console-chosen boot disk (re-enable provisioning and reboot the node)", ev)
		return
	}
	site, err := h.cfg.Site()
	if err != nil {
		h.fail(w, ev, ip, "read site settings", err)
		return
	}
	body, files, pw, err := h.render(r, reg, site, override, version)
	if err != nil {
		h.fail(w, ev, ip, "render answer", err)
		return
	}
	if _, err := h.cfg.Registry.Consume(ctx, reg.Name, ConsumeRecord{Time: h.cfg.Now(), ClientIP: ip, MACs: macs, Serial: serial, UUID: uuid}); err != nil {
		if errors.Is(err, ErrAlreadyConsumed) || errors.Is(err, ErrNotFound) {
			refuse(http.StatusNotFound, "no pending registration matches this machine", ev)
			return
		}
		h.fail(w, ev, ip, "consume registration", err)
		return
	}
	// Only the request that consumed the registration gets here: it alone
	// writes the secret and the one-shot files.
	if _, err := h.cfg.Secrets.WritePassword(reg.Name, pw); err != nil {
		h.fail(w, ev, ip, "write the root password", err)
		return
	}
	for name, data := range files {
		if err := atomicfile.WriteFile(filepath.Join(h.dir, name), data, 0o600); err != nil {
			h.fail(w, ev, ip, "write first-boot files", err)
			return
		}
	}
	ev.Kind, ev.Status, ev.ClientIP = EventAnswer, http.StatusOK, ip
	ev.Detail = fmt.Sprintf("matched by %s; installer %s", reason, version)
	h.record(ev)
	h.log.Info("answer served", "node", reg.Name, "match", string(reason), "installer", version.String(), "client_ip", ip)
	w.Header().Set("Content-Type", ContentTypeTOML)
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

// render builds and renders a node's answer with a new password. It
// returns the TOML, the one-shot files to write once the registration is
// consumed (first-boot script and webhook token, by file name), and the
// plain password for the secret store.
func (h *Handler) render(r *http.Request, reg Registration, site Site, override BootDisk, v Version) ([]byte, map[string][]byte, string, error) {
	pw, err := GeneratePassword()
	if err != nil {
		return nil, nil, "", err
	}
	hash, err := HashPassword(pw)
	if err != nil {
		return nil, nil, "", err
	}
	o := BuildOptions{Site: site, BootDisk: override, RootPassword: pw, RootPasswordHash: hash}
	files := map[string][]byte{}
	if v.AtLeast(Version83) {
		base := h.baseURL(r)
		script, err := FirstBootScript(reg)
		if err != nil {
			return nil, nil, "", err
		}
		fb, err := newToken()
		if err != nil {
			return nil, nil, "", err
		}
		hook, err := newToken()
		if err != nil {
			return nil, nil, "", err
		}
		files[fb+".sh"] = script
		files[hook+".webhook"] = []byte(reg.Name + "\n")
		o.FirstBootURL = base + "/first-boot/" + fb
		o.WebhookURL = base + "/webhook/" + hook
		o.CertFingerprint = h.cfg.CertFingerprint
	}
	a, err := Build(reg, o)
	if err != nil {
		return nil, nil, "", err
	}
	if len(a.Global.RootSSHKeys) == 0 {
		h.log.Warn("answer carries no SSH key: day-2 access to the node is by key; give --ssh-key or site ssh_keys", "node", reg.Name)
	}
	body, err := Render(a, v, RenderOptions{
		Header:          Header(reg, a.Global.FQDN.Name, v, h.cfg.Now()),
		DropUnsupported: true,
		Logger:          h.log,
	})
	if err != nil {
		return nil, nil, "", err
	}
	return body, files, pw, nil
}

func (h *Handler) baseURL(r *http.Request) string {
	if h.cfg.BaseURL != "" {
		return strings.TrimSuffix(h.cfg.BaseURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (h *Handler) fail(w http.ResponseWriter, ev Event, ip, what string, err error) {
	ev.Kind, ev.Status, ev.ClientIP, ev.Detail = EventRefused, http.StatusInternalServerError, ip, what+" failed"
	h.record(ev)
	h.log.Error("answer failed", "step", what, "node", ev.Node, "err", err)
	reply(w, http.StatusInternalServerError, what+" failed; see the server log")
}

var tokenRE = regexp.MustCompile(`^[A-Za-z0-9_-]{22,64}$`)

func newToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// claim renames a one-shot file to its .served name and returns its
// content; a second claim finds nothing. Only one of concurrent claims
// wins the rename.
func (h *Handler) claim(token, ext string) ([]byte, bool) {
	if !tokenRE.MatchString(token) {
		return nil, false
	}
	src := filepath.Join(h.dir, token+ext)
	dst := src + ".served"
	if err := os.Rename(src, dst); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			h.log.Error("cannot claim one-shot file", "err", err)
		}
		return nil, false
	}
	data, err := os.ReadFile(dst)
	if err != nil {
		return nil, false
	}
	return data, true
}

// EventRequest records a request for anything but an answer, a
// first-boot script or a webhook.
const EventRequest = "request"

func (h *Handler) unknown(w http.ResponseWriter, r *http.Request) {
	h.record(Event{Kind: EventRefused, ClientIP: clientIP(r), Status: http.StatusNotFound, Detail: "unknown endpoint " + r.Method + " " + truncate(r.URL.Path, 200)})
	reply(w, http.StatusNotFound, "unknown endpoint")
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func (h *Handler) methodNotAllowed(w http.ResponseWriter, r *http.Request, kind, allow string) {
	h.record(Event{Kind: kind, ClientIP: clientIP(r), Status: http.StatusMethodNotAllowed, Detail: r.Method + " not allowed"})
	w.Header().Set("Allow", allow)
	reply(w, http.StatusMethodNotAllowed, "method not allowed")
}

func (h *Handler) firstBoot(w http.ResponseWriter, r *http.Request) {
	ev := Event{Kind: EventFirstBoot, ClientIP: clientIP(r)}
	if r.Method != http.MethodGet {
		h.methodNotAllowed(w, r, EventFirstBoot, http.MethodGet)
		return
	}
	script, ok := h.claim(r.PathValue("token"), ".sh")
	if !ok {
		ev.Status, ev.Detail = http.StatusNotFound, "unknown or already served first-boot token"
		h.record(ev)
		reply(w, http.StatusNotFound, "no such first-boot script (each is served once)")
		return
	}
	ev.Status, ev.Detail = http.StatusOK, "first-boot script served"
	h.record(ev)
	w.Header().Set("Content-Type", "text/x-shellscript")
	w.Write(script)
}

// EventInstalled records the installer's post-installation report.
const EventInstalled = "installed"

func (h *Handler) webhook(w http.ResponseWriter, r *http.Request) {
	ev := Event{Kind: EventInstalled, ClientIP: clientIP(r)}
	if r.Method != http.MethodPost {
		h.methodNotAllowed(w, r, EventRefused, http.MethodPost)
		return
	}
	io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, MaxBodySize))
	name, ok := h.claim(r.PathValue("token"), ".webhook")
	if !ok {
		ev.Kind, ev.Status, ev.Detail = EventRefused, http.StatusNotFound, "unknown or already used webhook token"
		h.record(ev)
		reply(w, http.StatusNotFound, "no such webhook")
		return
	}
	ev.Node, ev.Status, ev.Detail = strings.TrimSpace(string(name)), http.StatusOK, "installer reported success"
	h.record(ev)
	h.log.Info("node installed", "node", ev.Node)
	if h.cfg.OnInstalled != nil {
		h.cfg.OnInstalled(ev.Node)
	}
	reply(w, http.StatusOK, "ok")
}

// Installed reports the nodes whose installer called the webhook, from
// the event log at path.
func Installed(_ context.Context, path string) (map[string]time.Time, error) {
	evs, err := ReadEvents(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return map[string]time.Time{}, nil
		}
		return nil, err
	}
	out := map[string]time.Time{}
	for _, e := range evs {
		if e.Kind == EventInstalled && e.Node != "" {
			out[e.Node] = e.Time
		}
	}
	return out, nil
}
