package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	"github.com/plasmactl/plasma-node/pxe/idempotency"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// createKeys are the keys a posted registration may have.
var createKeys = []string{"name", "macs", "boot_disk", "pools", "created", "serial", "uuid", "ssh_keys", "bmc", "bmc_password", "boot_method", "media_answer", "network", "nic_names", "replace"}

// registrationBody is a posted registration's shape, down to the keys of
// bmc and of each pool, for checkKeys: every key at every level spelt
// exactly, given once and known. Its values are decoded by
// registry.DecodeRegistration.
type registrationBody struct {
	Name        string              `json:"name"`
	MACs        []string            `json:"macs"`
	BootDisk    string              `json:"boot_disk"`
	Pools       []registry.DataPool `json:"pools"`
	Created     string              `json:"created"`
	Serial      string              `json:"serial"`
	UUID        string              `json:"uuid"`
	SSHKeys     []string            `json:"ssh_keys"`
	BMC         *registry.BMC       `json:"bmc"`
	BMCPassword string              `json:"bmc_password"`
	BootMethod  string              `json:"boot_method"`
	MediaAnswer string              `json:"media_answer"`
	Network     *registry.Network   `json:"network"`
	NICNames    map[string]string   `json:"nic_names"`
	Replace     bool                `json:"replace"`
}

// fieldOf names the request field a registration error is about.
func fieldOf(err error) string {
	var pin *registry.PinTakenError
	switch {
	case errors.As(err, &pin):
		return map[string]string{registry.PinMAC: "macs", registry.PinSerial: "serial", registry.PinUUID: "uuid"}[pin.Pin.Kind]
	case errors.Is(err, registry.ErrInvalidName):
		return "name"
	case errors.Is(err, registry.ErrInvalidMAC):
		return "macs"
	case errors.Is(err, registry.ErrInvalidBootDisk):
		return "boot_disk"
	case errors.Is(err, registry.ErrInvalidPool):
		return "pools"
	case errors.Is(err, registry.ErrInvalidSerial):
		return "serial"
	case errors.Is(err, registry.ErrInvalidUUID):
		return "uuid"
	case errors.Is(err, registry.ErrInvalidSSHKey):
		return "ssh_keys"
	case errors.Is(err, registry.ErrInvalidBMC):
		return "bmc"
	case errors.Is(err, registry.ErrInvalidMediaAnswer):
		return "media_answer"
	case errors.Is(err, registry.ErrInvalidBootMethod):
		return "boot_method"
	case errors.Is(err, registry.ErrInvalidNetwork):
		return "network"
	case errors.Is(err, registry.ErrInvalidNICName):
		return "nic_names"
	}
	return ""
}

func (h *Handler) listRegistrations(w http.ResponseWriter, r *http.Request) {
	nodes, err := regbackend.Status(r.Context(), h.cfg.Registry, h.cfg.Events, h.cfg.Installs)
	if err != nil {
		h.internal(w, "list registrations", err)
		return
	}
	writeJSON(w, http.StatusOK, nodes)
}

func (h *Handler) getRegistration(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := registry.ValidateName(name); err != nil {
		writeError(w, http.StatusBadRequest, err.Error(), "name")
		return
	}
	nodes, err := regbackend.Status(r.Context(), h.cfg.Registry, h.cfg.Events, h.cfg.Installs)
	if err != nil {
		h.internal(w, "list registrations", err)
		return
	}
	i := slices.IndexFunc(nodes, func(n backend.Node) bool { return n.Name == name })
	if i < 0 {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no registration named %q", name), "name")
		return
	}
	writeJSON(w, http.StatusOK, nodes[i])
}

func (h *Handler) deleteRegistration(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := registry.ValidateName(name); err != nil {
		writeError(w, http.StatusBadRequest, err.Error(), "name")
		return
	}
	err := registrar.Unregister(r.Context(), h.cfg.Registry, h.cfg.Secrets, name)
	switch {
	case errors.Is(err, registry.ErrNotFound):
		writeError(w, http.StatusNotFound, err.Error(), "name")
	case err != nil:
		h.internal(w, "delete registration", err)
	default:
		h.log.Info("api: registration deleted", "node", name, "token", tokenOf(r).Name, "client_ip", clientIP(r))
		w.WriteHeader(http.StatusNoContent)
	}
}

func (h *Handler) createRegistration(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	key := r.Header.Get(IdempotencyHeader)
	if key == "" {
		h.register(w, r, body)
		return
	}
	if len(key) > maxIdempotencyKey || strings.ContainsFunc(key, func(c rune) bool { return c < ' ' || c > '~' }) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%s: want 1 to %d printable ASCII characters", IdempotencyHeader, maxIdempotencyKey), IdempotencyHeader)
		return
	}
	unlock := h.cfg.Replies.Lock(r.Context(), key)
	defer unlock()
	req := requestHash(tokenOf(r).Name, r.Method, r.URL.Path, withoutPassword(body))
	prev, err := h.cfg.Replies.Get(r.Context(), key)
	if err != nil {
		h.internal(w, "read idempotency record", err)
		return
	}
	if prev != nil {
		if prev.Request != req {
			writeError(w, http.StatusUnprocessableEntity, IdempotencyHeader+" was used for another request; use a new key for a new request", IdempotencyHeader)
			return
		}
		w.Header().Set("Idempotent-Replayed", "true")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(prev.Status)
		io.WriteString(w, prev.Body)
		return
	}
	rec := &recorder{ResponseWriter: w}
	h.register(rec, r, body)
	// Only a done registration is kept: a refusal may be retried after
	// the cause is gone (a pin freed, a server error passed). Its reply
	// is kept even if the client has gone meanwhile, so that a repeat
	// is not registered again.
	if rec.status >= 200 && rec.status < 300 {
		if err := h.cfg.Replies.Put(context.WithoutCancel(r.Context()), key, idempotency.Reply{Request: req, Status: rec.status, Body: rec.body.String(), Time: time.Now().UTC()}); err != nil {
			h.log.Error("api: cannot keep the reply for its idempotency key; a repeat registers again", "err", err)
		}
	}
}

// withoutPassword returns body without its bmc_password, for the
// idempotency record: a hash of a short password beside the rest of the
// request could be guessed back.
func withoutPassword(body []byte) string {
	var raw map[string]json.RawMessage
	if json.Unmarshal(body, &raw) != nil || raw["bmc_password"] == nil {
		return string(body)
	}
	delete(raw, "bmc_password")
	out, _ := json.Marshal(raw)
	return string(out)
}

// recorder keeps what a handler writes, passing it on.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(s int) {
	r.status = s
	r.ResponseWriter.WriteHeader(s)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

// register decodes body as a registration and writes it.
func (h *Handler) register(w http.ResponseWriter, r *http.Request, body []byte) {
	var raw map[string]json.RawMessage
	if !decodeStrict(w, body, &raw) {
		return
	}
	if raw == nil {
		writeError(w, http.StatusBadRequest, "malformed request: want a JSON object", "")
		return
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(createKeys, k) {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("malformed request: unknown field %q (want %s)", k, strings.Join(createKeys, ", ")), k)
			return
		}
	}
	if field, err := checkKeys(body, reflect.TypeOf(registrationBody{})); err != nil && field != "" {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%s: %s", errKeys, err), field)
		return
	}
	var opts registry.RegisterOptions
	if v, ok := raw["replace"]; ok {
		if err := json.Unmarshal(v, &opts.Replace); err != nil {
			writeError(w, http.StatusBadRequest, "malformed request: replace: want true or false", "replace")
			return
		}
		delete(raw, "replace")
	}
	var bmcPassword string
	if v, ok := raw["bmc_password"]; ok {
		if err := json.Unmarshal(v, &bmcPassword); err != nil || bmcPassword == "" || strings.ContainsAny(bmcPassword, "\r\n") {
			writeError(w, http.StatusBadRequest, "malformed request: bmc_password: want the BMC password, a non-empty string on one line", "bmc_password")
			return
		}
		delete(raw, "bmc_password")
		if _, ok := raw["bmc"]; !ok {
			writeError(w, http.StatusUnprocessableEntity, "bmc_password without bmc: the password is the BMC's", "bmc_password")
			return
		}
		if h.cfg.Power == nil || h.cfg.Secrets == nil {
			writeError(w, http.StatusNotImplemented, "this server has no BMC control to keep a BMC password for", "bmc_password")
			return
		}
	}
	if _, ok := raw["name"]; !ok {
		writeError(w, http.StatusUnprocessableEntity, "name is required", "name")
		return
	}
	// A new registration's name is its host name: the one rule, stated
	// before the looser rule of files could word it otherwise.
	var name string
	if json.Unmarshal(raw["name"], &name) == nil {
		if err := registry.ValidateHostname(name); err != nil {
			writeError(w, http.StatusUnprocessableEntity, err.Error(), "name")
			return
		}
	}
	if _, ok := raw["boot_disk"]; !ok {
		raw["boot_disk"] = json.RawMessage(`"ask"`) // as register without --boot-disk
	}
	data, _ := json.Marshal(raw)
	reg, err := registry.DecodeRegistration(data, "")
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, err.Error(), fieldOf(err))
		return
	}
	if reg.Created.IsZero() {
		reg.Created = time.Now().UTC()
	}
	if reg.BMC != nil {
		if err := reg.Validate(); err != nil {
			writeError(w, http.StatusUnprocessableEntity, err.Error(), fieldOf(err))
			return
		}
		if bmcPassword == "" {
			writeError(w, http.StatusUnprocessableEntity, "bmc needs bmc_password (it is kept beside the node secrets, never in the registration)", "bmc_password")
			return
		}
	}
	// The site's boot method applies to a registration naming none.
	if err := registry.CheckBootMethod(reg, h.cfg.Site); err != nil {
		writeError(w, http.StatusUnprocessableEntity, err.Error(), fieldOf(err))
		return
	}
	// The password is kept once the registration is accepted.
	res, err := registrar.Register(r.Context(), h.cfg.Registry, h.cfg.Secrets, reg, opts, bmcPassword)
	switch {
	case errors.Is(err, registry.ErrPinTaken):
		writeError(w, http.StatusConflict, err.Error(), fieldOf(err))
		return
	case errors.Is(err, registry.ErrInvalidRegistration):
		writeError(w, http.StatusUnprocessableEntity, err.Error(), fieldOf(err))
		return
	case err != nil:
		h.internal(w, "register", err)
		return
	}
	written, err := h.cfg.Registry.Get(r.Context(), reg.Name)
	if err != nil {
		written = reg
	}
	if p := res.Previous; p != nil && r.Header.Get(IdempotencyHeader) != "" && p.Created.Equal(written.Created) && len(registry.Changes(*p, written)) == 0 {
		// A repeat of a request whose reply was lost before it was kept
		// (the daemon died in between) replaced what it wrote itself.
		res.Previous = nil
	}
	out := RegisterResponse{Registration: written, Previous: res.Previous}
	for _, m := range res.Moved {
		out.Moved = append(out.Moved, PinMove{Kind: m.Pin.Kind, Value: m.Pin.Value, From: m.From, Removed: m.Removed})
	}
	h.log.Info("api: registration written", "node", reg.Name, "replaced", res.Previous != nil, "token", tokenOf(r).Name, "client_ip", clientIP(r))
	writeJSON(w, http.StatusCreated, out)
}

// internal logs err and answers 500 without it; a store that cannot be
// reached now is 503 naming it (never its password: its error says so).
func (h *Handler) internal(w http.ResponseWriter, what string, err error) {
	h.log.Error("api: "+what+" failed", "err", err)
	if unavailable(err) {
		writeError(w, http.StatusServiceUnavailable, what+" failed: "+err.Error()+"; try again", "")
		return
	}
	writeError(w, http.StatusInternalServerError, what+" failed on the server; see its log", "")
}

// unavailable reports the error of a store that cannot be reached now:
// one with an Unavailable method saying so (package pxe/store/postgres's), matched by the
// method so that the API links no store.
func unavailable(err error) bool {
	var u interface{ Unavailable() bool }
	return errors.As(err, &u) && u.Unavailable()
}

// maxIdempotencyKey is the longest Idempotency-Key taken.
const maxIdempotencyKey = 255

func requestHash(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}
