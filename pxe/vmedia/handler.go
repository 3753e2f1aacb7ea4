package vmedia

import (
	"context"
	"crypto/subtle"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/internal/source"
)

// DefaultMaxPerSource is how many requests for media one address has
// served at once (the addresses of one IPv6 /64 together 8 times as
// many): BMCs read an image in a few parallel ranges; more get 503 at
// once and retry.
const DefaultMaxPerSource = 8

// Medium is one node's image as the window serves it.
type Medium struct {
	// Image reads the image, of Size bytes.
	Image io.ReaderAt
	Size  int64
	// ModTime is its Last-Modified.
	ModTime time.Time
	// Claim, if set, is called once, on the first GET of the image (not
	// HEAD): it consumes the registration whose answer the image holds.
	// An error refuses the request, as the answer's would (404 for one
	// wrapping backend.ErrNoAnswer, a backend.Refusal's status, else
	// 500), and the next request asks again.
	Claim func(ctx context.Context) error
	// Close, if set, is called once the image is served no more.
	Close func() error
	// Live, if set, says whether a claimed medium may still be served:
	// false once its registration was re-armed (pending again), so that
	// the old answer dies with it. It is asked at most every
	// Config.LiveEvery while the medium is read.
	Live func(ctx context.Context) bool
}

// DefaultLiveEvery is how often a claimed medium's Live is asked.
const DefaultLiveEvery = 2 * time.Second

// Config configures a [Handler].
type Config struct {
	// StateDir is the state folder whose armed media ([Dir.Arm]) are
	// served.
	StateDir string
	// WindowPID is the serving window's process: a medium armed for
	// another window is not served. 0 does not check.
	WindowPID int
	// Media returns node's medium of kind k for the client at clientIP;
	// it is asked once per armed URL, on its first request, until it
	// succeeds.
	Media func(ctx context.Context, node string, k Kind, clientIP string) (*Medium, error)
	// MaxPerSource bounds the requests one address has served at once;
	// the addresses of one IPv6 /64 together 8 times as many. Default:
	// [DefaultMaxPerSource].
	MaxPerSource int
	// LiveEvery is how often a claimed medium's Live is asked while it
	// is read. Default: [DefaultLiveEvery].
	LiveEvery time.Duration
	// Logger receives what was served and refused, never a URL or token;
	// nil discards.
	Logger *slog.Logger
}

// Handler serves GET and HEAD of /media/<token>/<node>.iso (and .img,
// an answer image): the node's medium, while its URL is armed and the window is open, with single and
// multiple ranges (416 past the end), ETag, Last-Modified and
// conditional requests. The first GET claims the medium for its address
// (and consumes its registration, [Medium.Claim]); a request from
// another address is then refused (403). A guessed, disarmed or
// replaced URL gets 404, as does one of another window; after
// [Handler.Close], 410. Safe for concurrent use.
type Handler struct {
	cfg Config
	log *slog.Logger

	mu     sync.Mutex
	closed bool
	served map[string]*served // by token hash
	byNode map[string]string  // node and extension -> its token hash in served
	active source.Counts
}

// served is an armed URL being served.
type served struct {
	node string
	kind Kind
	mu   sync.Mutex // held while the medium is made and claimed
	m    *Medium
	// owner is the address that claimed it, "" before.
	owner string
	// checked is when Live last said yes.
	checked time.Time
}

// New returns the handler of cfg's armed media.
func New(cfg Config) *Handler {
	if cfg.MaxPerSource <= 0 {
		cfg.MaxPerSource = DefaultMaxPerSource
	}
	if cfg.LiveEvery <= 0 {
		cfg.LiveEvery = DefaultLiveEvery
	}
	h := &Handler{cfg: cfg, log: cfg.Logger, served: map[string]*served{}, byNode: map[string]string{}}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	return h
}

// Close ends serving: every medium is dropped (its Close called), and
// every request after gets 410. Requests reading meanwhile fail.
func (h *Handler) Close() error {
	h.mu.Lock()
	h.closed = true
	all := h.served
	h.served, h.byNode = map[string]*served{}, map[string]string{}
	h.mu.Unlock()
	var errs []error
	for _, s := range all {
		errs = append(errs, s.close())
	}
	return errors.Join(errs...)
}

func (s *served) close() error {
	if s.m != nil && s.m.Close != nil {
		return s.m.Close()
	}
	return nil
}

// ServeHTTP serves one request for a medium.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	m := urlRE.FindStringSubmatch(r.URL.Path)
	if m == nil {
		http.Error(w, "no such medium", http.StatusNotFound)
		return
	}
	token, node, kind := m[1], m[2], Installer
	if m[3] == "img" {
		kind = AnswerImage
	}
	ip, client := clientOf(r.RemoteAddr)
	if !h.enter(client) {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "too many requests for media from one address at once", http.StatusServiceUnavailable)
		return
	}
	defer h.leave(client)
	s, status, msg := h.lookup(r.Context(), token, node, kind, ip, r.Method == http.MethodGet)
	if status != 0 {
		if status != http.StatusNotFound {
			h.log.Warn("medium refused", "node", node, "client_ip", ip, "status", status, "reason", msg)
		}
		http.Error(w, msg, status)
		return
	}
	med := s.m
	w.Header().Set("ETag", `"`+strconv.FormatInt(med.Size, 16)+"-"+strconv.FormatInt(med.ModTime.UnixNano(), 16)+`"`)
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Cache-Control", "no-store")
	h.log.Debug("medium served", "node", node, "client_ip", ip, "method", r.Method, "range", r.Header.Get("Range"))
	http.ServeContent(w, r, "", med.ModTime, io.NewSectionReader(med.Image, 0, med.Size))
}

// lookup finds the medium of token, node and kind for the client at
// ip, making it on the URL's first request and claiming it on its first
// GET. It returns a status and message when the request is refused.
func (h *Handler) lookup(ctx context.Context, token, node string, kind Kind, ip string, get bool) (*served, int, string) {
	rec, err := readRecord(h.cfg.StateDir, node, kind)
	hash := hashOf(token)
	key := node + kind.ext()
	if err != nil || subtle.ConstantTimeCompare([]byte(hash), []byte(rec.Hash)) != 1 || (h.cfg.WindowPID != 0 && rec.WindowPID != h.cfg.WindowPID) {
		h.forget(key, "")
		return nil, http.StatusNotFound, "no such medium"
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, http.StatusGone, "the provisioning window closed"
	}
	h.forgetLocked(key, hash) // a replaced URL's medium
	s := h.served[hash]
	if s == nil {
		s = &served{node: node, kind: kind}
		h.served[hash], h.byNode[key] = s, hash
	}
	h.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.owner != "" && s.owner != ip {
		return nil, http.StatusForbidden, "this medium was fetched from another address"
	}
	if s.owner != "" && s.m.Live != nil && time.Since(s.checked) > h.cfg.LiveEvery {
		if !s.m.Live(ctx) {
			h.log.Info("medium dropped: its registration was re-armed", "node", node)
			disarmIf(h.cfg.StateDir, node, kind, hash) // the URL dies with it
			h.forget(key, "")
			return nil, http.StatusNotFound, "no such medium"
		}
		s.checked = time.Now()
	}
	if s.m == nil {
		med, err := h.cfg.Media(ctx, node, kind, ip)
		if err != nil {
			status, msg := refusal(h.log, node, err)
			return nil, status, msg
		}
		s.m = med
	}
	if get && s.owner == "" {
		if c := s.m.Claim; c != nil {
			if err := c(ctx); err != nil {
				status, msg := refusal(h.log, node, err)
				h.forget(key, "")
				return nil, status, msg
			}
			h.log.Info("medium claimed: its registration is consumed", "node", node, "client_ip", ip)
		}
		s.owner, s.checked = ip, time.Now()
	}
	return s, 0, ""
}

// forget drops the medium of key (its node and extension), unless it is
// the one of hash keep.
func (h *Handler) forget(key, keep string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.forgetLocked(key, keep)
}

func (h *Handler) forgetLocked(key, keep string) {
	old, ok := h.byNode[key]
	if !ok || old == keep {
		return
	}
	s := h.served[old]
	delete(h.served, old)
	delete(h.byNode, key)
	if s != nil {
		go s.close() // not under h.mu: a Close may wait for reads
	}
}

// refusal maps an error of Media or Claim to a status and a message that
// holds no secret.
func refusal(log *slog.Logger, node string, err error) (int, string) {
	var ref *backend.Refusal
	switch {
	case errors.As(err, &ref):
		return ref.Status, ref.Reason
	case errors.Is(err, backend.ErrNoAnswer):
		return http.StatusNotFound, "no such medium"
	}
	log.Error("cannot serve a medium", "node", node, "err", err)
	return http.StatusInternalServerError, "the medium cannot be served; see the window's log"
}

// enter takes one of the request slots of the client at a (its
// address's and its /64's, [source.Counts]), or reports there is none.
func (h *Handler) enter(a netip.Addr) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.active.Full(a, h.cfg.MaxPerSource) {
		return false
	}
	h.active.Add(a, 1)
	return true
}

// leave gives back the slot enter took for a.
func (h *Handler) leave(a netip.Addr) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.active.Add(a, -1)
}

// clientOf is the request's address, as logged and as counted.
func clientOf(remote string) (string, netip.Addr) {
	a := source.AddrOfRemote(remote)
	if !a.IsValid() {
		return remote, a
	}
	return a.String(), a
}
