package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/enrol"
	"github.com/plasmactl/plasma-node/pxe/idempotency"
	"github.com/plasmactl/plasma-node/pxe/internal/source"

	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/secret"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// Windows opens and closes the provisioning window of the state folder;
// the daemon implements it. Without one, the API shows the window as the
// state folder records it and refuses to open or close it (503).
type Windows interface {
	// Status returns the window, whoever runs it.
	Status(ctx context.Context) (WindowStatus, error)
	// Open opens a window for ttl with opts. A window already open is an
	// error matching window.ErrOpen (409); a bad setting one matching
	// [ErrBadRequest] (400), such as Secure Boot without a chain staged;
	// a window that could not start one matching [ErrNotStarted] (503).
	// The status's Warnings say what the window warned of as it started.
	Open(ctx context.Context, ttl time.Duration, opts WindowOptions) (WindowStatus, error)
	// Close closes the open window, whoever runs it; it reports whether
	// one was open.
	Close(ctx context.Context) (bool, error)
}

// Pages serves the window's status in full: every MAC, serial, UUID and
// address whole, which the window's own port masks (see package
// pxe/netboot). The daemon implements it over the window it runs.
type Pages interface {
	// FullPage serves the status page (HTML).
	FullPage(w http.ResponseWriter, r *http.Request)
	// FullStatus serves the same as JSON.
	FullStatus(w http.ResponseWriter, r *http.Request)
}

// ErrBadRequest marks an error of a [Windows] method that is the
// request's fault (400).
var ErrBadRequest = errors.New("bad request")

// ErrConflict marks an error of a [Windows] method that is a conflict
// with the window's state (409).
var ErrConflict = errors.New("conflict")

// ErrNotStarted marks an error of [Windows.Open] for a window that could
// not start (its port taken, its settings refused by the window): 503,
// with the window's own reason.
var ErrNotStarted = errors.New("the window did not open")

// Config configures a [Handler].
type Config struct {
	// Registry is the registrations. Required.
	Registry registry.Registrations
	// Tokens are the API's tokens. Required.
	Tokens apitoken.Tokens
	// Replies keeps the idempotency records (pxe/store's
	// Stores.Replies). Required.
	Replies idempotency.Store
	// Windows runs windows; nil refuses opening and closing.
	Windows Windows
	// Window is the window state shown without Windows (pxe/store's
	// Stores.Window); required without Windows.
	Window window.Store
	// Pages serves the window's full status page (GET /api/v1/page) and
	// report (GET /api/v1/status) to a read token; nil answers both with
	// 501.
	Pages Pages
	// Power runs the machines' BMCs; nil answers the power and boot
	// endpoints, and a registration with a BMC password, with 501.
	Power Power
	// Secrets keeps the BMC passwords (written once a registration is
	// accepted, removed with it); nil refuses a BMC password (501).
	Secrets secret.Store
	// Build is reported by the health endpoint. Version defaults to
	// "devel".
	Build Build
	// MaxAuthFailures is how many failed authentications an address may
	// have within AuthFailureWindow before it is refused with 429 until
	// the window has passed; the addresses of one IPv6 /64 together 8
	// times as many. Defaults: 10 and one minute.
	MaxAuthFailures   int
	AuthFailureWindow time.Duration
	// Events is the event store the stream follows, required: the
	// process's one store of the state folder (pxe/store's Events),
	// shared with the window and power control, so their events reach
	// the stream at once.
	Events events.Store
	// Installs holds the installers' reports, which the registrations
	// show once installed (address, host keys); nil shows none.
	Installs registry.Installs
	// Inbox is the discovery inbox GET /api/v1/discovered lists; nil
	// answers it with 501.
	Inbox discovery.Store
	// Rules are the enrolment rules the /rules endpoints manage (admin);
	// nil answers them with 501.
	Rules enrol.Store
	// SiteSecrets are the site's named secrets the /secrets endpoints
	// manage (admin: names listed, values write-only); nil answers them
	// with 501.
	SiteSecrets secret.Site
	// Site is the site's settings a rule is checked with and its names
	// made with.
	Site registry.Site
	// MaxStreams bounds the event streams open at once (each holds a
	// file and a connection); more get 503. Default 64.
	MaxStreams int
	// MaxStreamsPerToken bounds the event streams one token holds open
	// at once, so that one client cannot take them all; more get 429.
	// Default 8.
	MaxStreamsPerToken int
	// Logger receives refusals and changes; nil discards them.
	Logger *slog.Logger
}

// Handler serves the API. Create it with [New].
type Handler struct {
	cfg     Config
	log     *slog.Logger
	mux     *http.ServeMux
	limiter *limiter
	streams atomic.Int64 // event streams open

	streamsMu sync.Mutex
	perToken  map[string]map[*eventStream]struct{} // event streams open, by token name
}

// New returns the API handler of cfg.
func New(cfg Config) (*Handler, error) {
	if cfg.Registry == nil || cfg.Tokens == nil || cfg.Replies == nil || cfg.Events == nil {
		return nil, errors.New("api: Registry, Tokens, Replies and Events are required")
	}
	if cfg.Windows == nil && cfg.Window == nil {
		return nil, errors.New("api: Windows or a Window store is required")
	}
	if cfg.Build.Version == "" {
		cfg.Build.Version = "devel"
	}
	if cfg.MaxAuthFailures <= 0 {
		cfg.MaxAuthFailures = 10
	}
	if cfg.AuthFailureWindow <= 0 {
		cfg.AuthFailureWindow = time.Minute
	}
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = 64
	}
	if cfg.MaxStreamsPerToken <= 0 {
		cfg.MaxStreamsPerToken = 8
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Handler{cfg: cfg, log: log, mux: http.NewServeMux(), limiter: newLimiter(cfg.MaxAuthFailures, cfg.AuthFailureWindow)}
	routes := map[string]struct {
		scope apitoken.Scope
		fn    http.HandlerFunc
	}{
		"GET " + Prefix + "/registrations":                   {apitoken.ScopeRead, h.listRegistrations},
		"POST " + Prefix + "/registrations":                  {apitoken.ScopeRegister, h.createRegistration},
		"GET " + Prefix + "/registrations/{name}":            {apitoken.ScopeRead, h.getRegistration},
		"DELETE " + Prefix + "/registrations/{name}":         {apitoken.ScopeRegister, h.deleteRegistration},
		"GET " + Prefix + "/window":                          {apitoken.ScopeRead, h.getWindow},
		"PUT " + Prefix + "/window":                          {apitoken.ScopeAdmin, h.openWindow},
		"DELETE " + Prefix + "/window":                       {apitoken.ScopeAdmin, h.closeWindow},
		"GET " + Prefix + "/discovered":                      {apitoken.ScopeRead, h.listDiscovered},
		"GET " + Prefix + "/rules":                           {apitoken.ScopeAdmin, h.listRules},
		"POST " + Prefix + "/rules":                          {apitoken.ScopeAdmin, h.addRule},
		"PUT " + Prefix + "/rules":                           {apitoken.ScopeAdmin, h.applyRules},
		"DELETE " + Prefix + "/rules/{name}":                 {apitoken.ScopeAdmin, h.removeRule},
		"GET " + Prefix + "/rules/preview":                   {apitoken.ScopeAdmin, h.previewRules},
		"GET " + Prefix + "/secrets":                         {apitoken.ScopeAdmin, h.listSiteSecrets},
		"PUT " + Prefix + "/secrets/{name}":                  {apitoken.ScopeAdmin, h.setSiteSecret},
		"DELETE " + Prefix + "/secrets/{name}":               {apitoken.ScopeAdmin, h.removeSiteSecret},
		"GET " + Prefix + "/page":                            {apitoken.ScopeRead, h.page},
		"GET " + Prefix + "/status":                          {apitoken.ScopeRead, h.status},
		"GET " + Prefix + "/events":                          {apitoken.ScopeRead, h.events},
		"GET " + Prefix + "/tokens":                          {apitoken.ScopeAdmin, h.listTokens},
		"POST " + Prefix + "/tokens":                         {apitoken.ScopeAdmin, h.createToken},
		"DELETE " + Prefix + "/tokens/{name}":                {apitoken.ScopeAdmin, h.revokeToken},
		"GET " + Prefix + "/registrations/{name}/power":      {apitoken.ScopeRead, h.getPower},
		"POST " + Prefix + "/registrations/{name}/power":     {apitoken.ScopeRegister, h.postPower},
		"POST " + Prefix + "/registrations/{name}/boot":      {apitoken.ScopeRegister, h.postBoot},
		"POST " + Prefix + "/registrations/{name}/reinstall": {apitoken.ScopeRegister, h.postReinstall},
	}
	for pattern, rt := range routes {
		h.mux.Handle(pattern, h.guard(rt.scope, rt.fn))
	}
	h.mux.HandleFunc("GET "+Prefix+"/health", h.health)
	h.mux.HandleFunc(Prefix+"/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path, "")
	})
	return h, nil
}

// ServeHTTP serves one request; bodies are bounded to [MaxBody].
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
	}
	// The mux answers a wrong method with 405 in plain text; make it JSON.
	_, pattern := h.mux.Handler(r)
	if pattern == "" || pattern == Prefix+"/" {
		if allowed := h.allowed(r); allowed != "" {
			w.Header().Set("Allow", allowed)
			writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed on %s (allowed: %s)", r.Method, r.URL.Path, allowed), "")
			return
		}
	}
	h.mux.ServeHTTP(w, r)
}

// allowed lists the methods path takes, empty when it takes none.
func (h *Handler) allowed(r *http.Request) string {
	var out []string
	for _, m := range []string{"GET", "POST", "PUT", "DELETE"} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := h.mux.Handler(probe); p != "" && p != Prefix+"/" {
			out = append(out, m)
		}
	}
	return strings.Join(out, ", ")
}

// page serves the window's full status page. The page refreshes itself
// by fetching its own URL, which a browser does with the credentials it
// was given (HTTP Basic, see bearer).
func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	if h.cfg.Pages == nil {
		writeError(w, http.StatusNotImplemented, "this server runs no window: its status page is on the window's own port, masked", "")
		return
	}
	h.cfg.Pages.FullPage(w, r)
}

// status serves the window's full status report.
func (h *Handler) status(w http.ResponseWriter, r *http.Request) {
	if h.cfg.Pages == nil {
		writeError(w, http.StatusNotImplemented, "this server runs no window: its status is on the window's own port, masked", "")
		return
	}
	h.cfg.Pages.FullStatus(w, r)
}

func (h *Handler) health(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, Health{Status: "ok", Build: h.cfg.Build})
}

type tokenKey struct{}

// guard authenticates the request's bearer token and checks its scope.
func (h *Handler) guard(need apitoken.Scope, next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ip := clientIP(r)
		// The failures count for the address and its /64, so that
		// rotating addresses within it is no escape.
		client := source.AddrOfRemote(r.RemoteAddr)
		tok, reason := bearer(r)
		var t apitoken.Token
		if reason == "" {
			var err error
			t, err = h.cfg.Tokens.Authenticate(r.Context(), tok)
			switch {
			case errors.Is(err, apitoken.ErrUnknownToken):
				reason = "invalid or revoked token"
			case err == nil && t.Expired(time.Now()):
				reason = "expired token"
			case err != nil:
				h.log.Error("api: cannot read the tokens; refusing every request", "err", err)
				msg := "the server cannot read its tokens"
				if unavailable(err) { // the store's own words: named, no password
					msg += ": " + err.Error() + "; try again"
				}
				writeError(w, http.StatusServiceUnavailable, msg, "")
				return
			}
		}
		if reason != "" {
			// An address with too many failures is refused outright; a
			// valid token from it never is (a neighbour behind the same
			// NAT, or a client misconfigured beside it, must not lock it
			// out), and tokens are too long to guess.
			if wait := h.limiter.blocked(client, time.Now()); wait > 0 {
				h.limiter.fail(client, time.Now())
				h.log.Warn("api: request refused: too many failed authentications from this address", "client_ip", ip, "path", r.URL.Path)
				w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
				writeError(w, http.StatusTooManyRequests, "too many failed authentications from this address; try again later", "")
				return
			}
			h.limiter.fail(client, time.Now())
			h.log.Warn("api: authentication failed", "client_ip", ip, "method", r.Method, "path", r.URL.Path, "reason", reason)
			challenge := `Bearer realm="node-provisioner"`
			if tok != "" {
				challenge += `, error="invalid_token"`
			}
			w.Header().Set("WWW-Authenticate", challenge)
			if r.URL.Path == Prefix+"/page" {
				// A browser asks for the token (as the password).
				w.Header().Add("WWW-Authenticate", `Basic realm="node-provisioner: a read token as the password", charset="UTF-8"`)
			}
			writeError(w, http.StatusUnauthorized, reason, "")
			return
		}
		if !t.Scope.Allows(need) {
			h.log.Warn("api: token lacks the scope", "client_ip", ip, "token", t.Name, "scope", string(t.Scope), "need", string(need), "path", r.URL.Path)
			writeError(w, http.StatusForbidden, fmt.Sprintf("token %q has scope %s; %s %s needs %s", t.Name, t.Scope, r.Method, r.URL.Path, need), "")
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), tokenKey{}, t)))
	})
}

// bearer returns the request's bearer token, or why it has none. For
// the status page (GET /api/v1/page) a browser, which cannot send a
// bearer token as it loads a page, may send the token as the password
// of HTTP Basic authentication (any user name).
func bearer(r *http.Request) (tok, reason string) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", "missing bearer token (Authorization: Bearer …)"
	}
	if _, pw, ok := r.BasicAuth(); ok && strings.TrimSpace(pw) != "" && r.URL.Path == Prefix+"/page" {
		return strings.TrimSpace(pw), ""
	}
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return "", "the Authorization header is not a bearer token"
	}
	return strings.TrimSpace(tok), ""
}

// tokenOf returns the token the request was authenticated with.
func tokenOf(r *http.Request) apitoken.Token {
	t, _ := r.Context().Value(tokenKey{}).(apitoken.Token)
	return t
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg, field string) {
	writeJSON(w, status, Error{Error: msg, Field: field})
}

// readBody reads the bounded body; a refusal is written and false
// returned when it cannot.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			writeError(w, http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type %q: the API reads application/json", ct), "")
			return nil, false
		}
	}
	data, err := io.ReadAll(r.Body)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes", MaxBody), "")
		return nil, false
	case err != nil:
		writeError(w, http.StatusBadRequest, "cannot read the request body: "+err.Error(), "")
		return nil, false
	}
	return data, true
}

// readJSON reads the bounded body and decodes it into v ([readBody],
// [decodeStrict]); a refusal is written and false returned.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	body, ok := readBody(w, r)
	return ok && decodeStrict(w, body, v)
}

// decodeStrict decodes a JSON object into v, refusing unknown fields and
// trailing data; a refusal is written and false returned.
func decodeStrict(w http.ResponseWriter, data []byte, v any) bool {
	if field, err := checkKeys(data, reflect.TypeOf(v)); err != nil && field != "" {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%s: %s", errKeys, err), field)
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("data after the JSON object")
	}
	if err != nil {
		msg, field := err.Error(), ""
		if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
			field = strings.Trim(f, `"`)
			msg = "unknown field " + f
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field = te.Field
			msg = fmt.Sprintf("%s: want %s, not a JSON %s", te.Field, jsonKind(te.Type), te.Value)
		}
		writeError(w, http.StatusBadRequest, "malformed request: "+msg, field)
		return false
	}
	return true
}

// jsonKind names what a value of Go type t is in JSON, for a refusal
// that says what would be valid (never a Go type's name).
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	default:
		return "an object"
	}
}
