package netboot

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/internal/source"
)

// maxEventField is the longest an event field (MACs, serial, detail)
// gets in the event log, the log and the timeline: 256 bytes, the rest
// counted ("… (N bytes more)"). A body of 23 000 MACs or a 1 MB serial
// thus adds no more than that to each line.
const maxEventField = 256

// clip cuts s to maxEventField bytes at a character boundary and says
// how much was dropped.
func clip(s string) string {
	if len(s) <= maxEventField {
		return s
	}
	cut := maxEventField
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d bytes more)", len(s)-cut)
}

// MaxBodySize is the largest system-info or webhook body read: 1 MiB.
const MaxBodySize = 1 << 20

// ContentTypeTOML is the type of an answer reply.
const ContentTypeTOML = "application/toml"

// answer serves POST /answer: it checks the bearer token when the staged
// release's installer sends one (Config.AnswerTokens; 401 without the
// right one, counted and recorded without the token), reads at most
// [MaxBodySize] of system info ([answer.ParseSystemInfo]; 400 when it is
// not, and for a product other than productPVE), takes the
// installer's version from it ([answer.DefaultVersion] when it has none;
// 400 below [answer.MinVersion]), asks the backend, and replies 200 with
// the answer rendered once for that version ([answer.Render], keys the
// version does not know left out and logged): as JSON (application/json)
// when the request's Accept prefers it and the version reads it (see
// answerFormat), else as TOML ([ContentTypeTOML]), with "Vary: Accept". A
// refusal gets its status and reason; a failure gets 500 and no detail.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request) {
	ip := hostOf(r.RemoteAddr)
	// client is the address the refusals are counted for, and with
	// it its /64, so that rotating addresses within it is no escape.
	client := source.AddrOfRemote(r.RemoteAddr)
	ctx := r.Context()
	ev := backend.Event{ClientIP: ip}
	// guess is what the request named: its token, then its machine's
	// MACs, serial and UUID (see refusals.go).
	guess := sha256.Sum256([]byte(r.Header.Get("Authorization")))
	if d := h.refusals.delay(client, time.Now()); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
	refuse := func(status int, msg string) {
		if status == http.StatusUnauthorized || status == http.StatusNotFound {
			// A guess (a token, a MAC, a serial) that missed.
			h.refusals.refused(client, guess, time.Now())
		}
		ev.Kind, ev.Status = events.Refused, status
		if ev.Detail == "" {
			ev.Detail = msg
		}
		h.record(ctx, ev)
		h.cfg.Metrics.answerRefused()
		h.log.Warn("answer refused", "status", status, "reason", msg, "client_ip", ip, "macs", ev.MAC, "serial", ev.Serial)
		reply(w, status, msg)
	}
	req, status, msg := h.request(w, r, &ev, &guess)
	if status != 0 {
		refuse(status, msg)
		return
	}
	// The steps of the seam (backend.Backend.Answer): ask, render once,
	// claim, write, report delivered.
	res, err := h.cfg.Backend.Answer(ctx, req)
	v := req.Version
	if refusedBy(err, &ev, refuse) {
		return
	}
	if err == nil && (res == nil || res.Answer == nil) {
		err = errors.New("the backend returned no answer and no error")
	}
	var body []byte
	format := answerFormat(strings.Join(r.Header.Values("Accept"), ","), v)
	if err == nil {
		ev.Node = res.Node
		body, err = h.render(res.Answer, v, answer.RenderOptions{Header: res.Header, DropUnsupported: true, Logger: h.log, Format: format})
		if err == nil && res.Claim != nil {
			if err = res.Claim(ctx); refusedBy(err, &ev, refuse) {
				delivered(res, err)
				return
			}
		}
	}
	if err != nil {
		h.fail(w, r, ev, err)
		delivered(res, err)
		return
	}
	w.Header().Set("Content-Type", format.ContentType())
	w.Header().Add("Vary", "Accept")
	w.WriteHeader(http.StatusOK)
	_, werr := w.Write(body)
	if werr == nil {
		werr = http.NewResponseController(w).Flush()
	}
	delivered(res, werr)
	if werr != nil {
		ev.Kind, ev.Status, ev.Detail = events.Refused, http.StatusOK, "answer not delivered: the connection failed while it was sent"
		h.record(ctx, ev)
		h.cfg.Metrics.answerRefused()
		h.log.Warn("answer not delivered", "node", res.Node, "client_ip", ip, "err", werr)
		return
	}
	h.refusals.served(client)
	ev.Kind, ev.Status, ev.Detail = events.Answer, http.StatusOK, res.Detail
	h.record(ctx, ev)
	h.cfg.Metrics.answerServed()
	h.log.Info("answer served", "node", res.Node, "detail", res.Detail, "installer", v.String(), "format", format.String(), "client_ip", ip)
}

// request reads an answer request: its method, body, system info,
// installer version and bootdisk parameter. A refusal comes back as a
// status and a message; ev gets the posted MACs and serial, guess the
// digest of what the request names.
func (h *Handler) request(w http.ResponseWriter, r *http.Request, ev *backend.Event, guess *[32]byte) (backend.AnswerRequest, int, string) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return backend.AnswerRequest{}, http.StatusMethodNotAllowed, "method not allowed; POST the system info"
	}
	if status, msg := h.authorize(r); status != 0 {
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="answer"`)
			h.cfg.Metrics.answerUnauthorized()
		}
		return backend.AnswerRequest{}, status, msg
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodySize))
	if err != nil {
		if tooBig := (*http.MaxBytesError)(nil); errors.As(err, &tooBig) {
			// As discovery and the API say it.
			return backend.AnswerRequest{}, http.StatusRequestEntityTooLarge, fmt.Sprintf("system-info body over %d bytes", MaxBodySize)
		}
		return backend.AnswerRequest{}, http.StatusBadRequest, fmt.Sprintf("system-info body unreadable: %v", err)
	}
	si, err := answer.ParseSystemInfo(body, r.Header.Get("Content-Type"))
	if errors.Is(err, answer.ErrTooManyInterfaces) {
		return backend.AnswerRequest{}, http.StatusBadRequest, fmt.Sprintf("invalid system info: over %d network interfaces listed; no machine has that many", answer.MaxInterfaces)
	}
	if err != nil {
		msg := "invalid system-info JSON: want a JSON object"
		if ct := r.Header.Get("Content-Type"); ct != "" && !strings.Contains(strings.ToLower(ct), "json") {
			msg += fmt.Sprintf(" sent as application/json (got Content-Type %q)", truncate(ct, 80))
		}
		return backend.AnswerRequest{}, http.StatusBadRequest, msg
	}
	ev.MAC, ev.Serial = clip(strings.Join(si.MACs(), ",")), clip(si.Serial())
	*guess = sha256.Sum256([]byte(r.Header.Get("Authorization") + "\x00" + strings.Join(si.MACs(), ",") + "\x00" + si.Serial() + "\x00" + si.UUID()))
	if p := si.Product.Product; p != "" && p != productPVE {
		ev.Detail = fmt.Sprintf("system info of product %q (%s), not Proxmox VE", truncate(p, 16), truncate(si.Product.FullName, 40))
		return backend.AnswerRequest{}, http.StatusBadRequest, fmt.Sprintf("product %q is not Proxmox VE: this server answers Proxmox VE installers only", truncate(p, 16))
	}
	v, ok := si.Version()
	if !ok {
		v = answer.DefaultVersion
	}
	if !v.Supported() {
		return backend.AnswerRequest{}, http.StatusBadRequest, fmt.Sprintf("installer version %s is not supported (want %s or later)", v, answer.MinVersion)
	}
	req := backend.AnswerRequest{Info: si, Version: v, ClientIP: ev.ClientIP, BaseURL: h.answerBase(r), BootDisk: r.URL.Query().Get("bootdisk")}
	if r.URL.Query().Has("bootdisk") && req.BootDisk == "" {
		return backend.AnswerRequest{}, http.StatusBadRequest, "invalid bootdisk parameter: want a disk name such as sda or nvme0n1, or a serial"
	}
	if r.TLS != nil {
		req.CertFingerprint, req.CertPin = h.cfg.CertFingerprint, h.cfg.CertPin
	}
	return req, 0, ""
}

// productPVE is the system-info product code of Proxmox VE; the window
// answers no other product's installer (a PBS or PMG ISO).
const productPVE = "pve"

// authorize checks the request's bearer token against Config.AnswerTokens
// in constant time. It returns 0 when the request may go on, else the
// status and message of the refusal; the token is never logged or echoed.
func (h *Handler) authorize(r *http.Request) (int, string) {
	if h.cfg.AnswerTokens == nil {
		return 0, ""
	}
	tokens, err := h.cfg.AnswerTokens(r.Context())
	if err != nil {
		h.log.Error("answer tokens unavailable; refusing answer requests", "err", err)
		return http.StatusInternalServerError, "answer token unavailable; see the server log"
	}
	if len(tokens) == 0 {
		return 0, ""
	}
	got, ok := bearer(r.Header.Get("Authorization"))
	sum := sha256.Sum256([]byte(got))
	match := 0
	for _, t := range tokens {
		want := sha256.Sum256([]byte(t))
		match |= subtle.ConstantTimeCompare(sum[:], want[:])
	}
	if !ok || match != 1 {
		if !ok {
			return http.StatusUnauthorized, "answer token required: this release's installer must send Authorization: Bearer <name>:<secret>"
		}
		return http.StatusUnauthorized, "wrong answer token"
	}
	return 0, ""
}

// bearer returns the credentials of an "Authorization: Bearer <token>"
// header (the scheme without case, RFC 9110), false when it has none.
func bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

func (h *Handler) answerBase(r *http.Request) string {
	if h.cfg.AnswerBaseURL != "" {
		return strings.TrimSuffix(h.cfg.AnswerBaseURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, ev backend.Event, err error) {
	var u interface{ Unavailable() bool }
	if errors.As(err, &u) && u.Unavailable() {
		// The store cannot be reached: nothing was consumed; the
		// installer tries again.
		ev.Kind, ev.Status, ev.Detail = events.Refused, http.StatusServiceUnavailable, "store unavailable"
		h.record(r.Context(), ev)
		h.cfg.Metrics.answerRefused()
		h.log.Error("answer failed: the store is unavailable", "node", ev.Node, "client_ip", ev.ClientIP, "err", err)
		reply(w, http.StatusServiceUnavailable, "the store is unavailable; try again")
		return
	}
	ev.Kind, ev.Status, ev.Detail = events.Refused, http.StatusInternalServerError, "answer failed"
	h.record(r.Context(), ev)
	h.cfg.Metrics.answerRefused()
	h.log.Error("answer failed", "node", ev.Node, "client_ip", ev.ClientIP, "err", err)
	reply(w, http.StatusInternalServerError, "answer failed; see the server log")
}

func (h *Handler) methodNotAllowed(w http.ResponseWriter, r *http.Request, kind events.Kind, allow string) {
	h.record(r.Context(), backend.Event{Kind: kind, ClientIP: hostOf(r.RemoteAddr), Status: http.StatusMethodNotAllowed, Detail: r.Method + " not allowed"})
	w.Header().Set("Allow", allow)
	reply(w, http.StatusMethodNotAllowed, "method not allowed")
}

func (h *Handler) firstBoot(w http.ResponseWriter, r *http.Request) {
	ev := backend.Event{Kind: events.FirstBoot, ClientIP: hostOf(r.RemoteAddr)}
	if r.Method != http.MethodGet {
		h.methodNotAllowed(w, r, events.FirstBoot, http.MethodGet)
		return
	}
	var script []byte
	err := backend.ErrNoAnswer
	if os, ok := h.cfg.Backend.(backend.OneShot); ok {
		script, err = os.FirstBoot(r.Context(), r.PathValue("token"), ev.ClientIP)
	}
	if err != nil {
		if !errors.Is(err, backend.ErrNoAnswer) {
			h.log.Error("first-boot script failed", "err", err)
		}
		ev.Status, ev.Detail = http.StatusNotFound, "unknown or already served first-boot token"
		h.record(r.Context(), ev)
		reply(w, http.StatusNotFound, "no such first-boot script (each is served once)")
		return
	}
	ev.Status, ev.Detail = http.StatusOK, "first-boot script served"
	h.record(r.Context(), ev)
	w.Header().Set("Content-Type", "text/x-shellscript")
	w.Write(script)
}

// refusedBy refuses the request with err's status when err is a refusal
// ([backend.Refusal] of 400 to 499, or [backend.ErrNoAnswer]: 404) and
// reports whether it did.
func refusedBy(err error, ev *backend.Event, refuse func(status int, msg string)) bool {
	var refusal *backend.Refusal
	switch {
	case errors.As(err, &refusal) && refusal.Status >= 400 && refusal.Status < 500:
		if refusal.Node != "" {
			ev.Node = refusal.Node
		}
		refuse(refusal.Status, refusal.Reason)
		return true
	case errors.Is(err, backend.ErrNoAnswer):
		refuse(http.StatusNotFound, err.Error())
		return true
	}
	return false
}

// delivered reports to the backend whether res reached its installer:
// the seam's last step, taken whatever happened before it.
func delivered(res *backend.Answer, err error) {
	if res != nil && res.Delivered != nil {
		res.Delivered(err)
	}
}
