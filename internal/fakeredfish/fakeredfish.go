package fakeredfish

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Hook is the machine behind the BMC.
type Hook interface {
	// Power reports whether the machine is on.
	Power(ctx context.Context) (bool, error)
	// Set runs one chassis control: "power" "1"|"0", "reset" "1",
	// "shutdown" "1" or "boot" "pxe"|"cd"|"none" ("cd": the virtual CD).
	Set(ctx context.Context, what, value string) error
}

// CommandHook runs argv plus "get power" or "set WHAT VALUE", the
// interface of ipmi_sim's chassis_control (its output "power:1" is on).
type CommandHook []string

// Power runs "get power".
func (h CommandHook) Power(ctx context.Context) (bool, error) {
	out, err := h.run(ctx, "get", "power")
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(out) == "power:1", nil
}

// Set runs "set what value".
func (h CommandHook) Set(ctx context.Context, what, value string) error {
	_, err := h.run(ctx, "set", what, value)
	return err
}

func (h CommandHook) run(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, h[0], append(slices.Clone(h[1:]), args...)...)
	out, err := c.Output()
	if err != nil {
		return "", fmt.Errorf("hook %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

// memoryHook keeps the power state in memory.
type memoryHook struct {
	mu sync.Mutex
	on bool
}

func (m *memoryHook) Power(context.Context) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.on, nil
}

func (m *memoryHook) Set(_ context.Context, what, value string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if what == "power" {
		m.on = value == "1"
	}
	return nil
}

// Config sets up a [Server].
type Config struct {
	// User and Password are the one account.
	User, Password string
	// SystemIDs are the ComputerSystems' ids; empty: "1".
	SystemIDs []string
	// ResetTypes are the offered ResetType values; empty: On, ForceOff,
	// GracefulShutdown, ForceRestart (no PowerCycle, as many BMCs).
	ResetTypes []string
	// NoETag makes the system carry no ETag (the spec does not require
	// one on a ComputerSystem).
	NoETag bool
	// Hook powers the machine; nil keeps the state in memory (off).
	Hook Hook
	// TaskPolls, when above 0, makes ComputerSystem.Reset asynchronous,
	// as DSP0266's "Asynchronous operations" has it: 202 Accepted with
	// the task monitor's URI in Location; a GET of the monitor answers
	// 202 (the Task, TaskState Running) TaskPolls times, then the reset
	// is done and the monitor answers 200 with the Task, Completed.
	TaskPolls int
	// TaskFails makes such a task end in TaskState Exception with this
	// message, the reset (or the PATCH) not done.
	TaskFails string
	// PatchTaskPolls, when above 0, makes a PATCH of the system
	// asynchronous in the same way: 202 Accepted with a task monitor,
	// which answers 202 PatchTaskPolls times, then the new boot
	// override is set and the monitor answers 200, Completed.
	PatchTaskPolls int
	// Media gives the BMC virtual media; the zero value: none.
	Media MediaConfig
}

// bootOverride is the system's Boot override.
type bootOverride struct{ enabled, target, mode string }

// Server is the fake service; it is an [http.Handler]. Serve it over
// TLS (httptest.NewTLSServer): Basic authentication requires HTTPS.
type Server struct {
	cfg Config

	mu       sync.Mutex
	etag     int
	override bootOverride
	sessions map[string]string // token -> session id
	nextID   int
	stale    bool // the next GET of the system returns an old ETag
	busy     int  // requests still to answer 503
	log      []string
	tasks    map[string]*task
	media    []*medium
}

// New returns a server for cfg.
func New(cfg Config) *Server {
	if len(cfg.SystemIDs) == 0 {
		cfg.SystemIDs = []string{"1"}
	}
	if len(cfg.ResetTypes) == 0 {
		cfg.ResetTypes = []string{"On", "ForceOff", "GracefulShutdown", "ForceRestart"}
	}
	if cfg.Hook == nil {
		cfg.Hook = &memoryHook{}
	}
	s := &Server{cfg: cfg, etag: 1, sessions: map[string]string{}, tasks: map[string]*task{}, media: newMedia(cfg.Media, cfg.SystemIDs[0])}
	s.override.enabled, s.override.target, s.override.mode = "Disabled", "None", "UEFI"
	return s
}

// ChangeBehind makes the system change after the client's next read, as
// another client's PATCH would: the client's If-Match then fails with
// 412 once.
func (s *Server) ChangeBehind() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stale = true
}

// Busy makes the next n requests fail with 503 Service Unavailable, as a
// BMC that is rebooting or overloaded answers.
func (s *Server) Busy(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy = n
}

// Calls returns the requests served so far as "METHOD PATH STATUS".
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// Override returns the boot override: Enabled, Target and Mode.
func (s *Server) Override() (enabled, target, mode string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.override.enabled, s.override.target, s.override.mode
}

// ExpireSessions forgets every session, as a BMC does when a session
// times out or the BMC restarts: their tokens then get 401.
func (s *Server) ExpireSessions() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.sessions)
}

// Sessions returns how many sessions are open.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

const (
	root        = "/redfish/v1/"
	systemsURI  = "/redfish/v1/Systems"
	sessionsURI = "/redfish/v1/SessionService/Sessions"
	maxBody     = 64 << 10
)

var (
	bootTargets = []string{"None", "Pxe", "Hdd", "Cd", "BiosSetup"}
	bootEnabled = []string{"Disabled", "Once", "Continuous"}
	bootModes   = []string{"Legacy", "UEFI"}
)

// ServeHTTP serves the Redfish calls.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &statusWriter{ResponseWriter: w, status: 200}
	s.serve(rec, r)
	s.mu.Lock()
	s.log = append(s.log, fmt.Sprintf("%s %s %d", r.Method, r.URL.Path, rec.status))
	s.mu.Unlock()
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	busy := s.busy > 0
	if busy {
		s.busy--
	}
	s.mu.Unlock()
	if busy {
		w.Header().Set("Retry-After", "1")
		s.fail(w, http.StatusServiceUnavailable, "Base.1.0.ServiceTemporarilyUnavailable", "The service is temporarily unavailable.")
		return
	}
	p := strings.TrimSuffix(r.URL.Path, "/")
	if p == "/redfish/v1" || p == "/redfish" {
		if r.Method != http.MethodGet {
			s.fail(w, http.StatusMethodNotAllowed, "Base.1.0.ActionNotSupported", "The service root is read-only.")
			return
		}
		s.json(w, http.StatusOK, map[string]any{"@odata.id": root, "@odata.type": "#ServiceRoot.v1_5_0.ServiceRoot", "Id": "RootService", "RedfishVersion": "1.6.0",
			"Systems": map[string]string{"@odata.id": systemsURI}, "Managers": map[string]string{"@odata.id": "/redfish/v1/Managers"}, "SessionService": map[string]string{"@odata.id": "/redfish/v1/SessionService"},
			"Links": map[string]any{"Sessions": map[string]string{"@odata.id": sessionsURI}}})
		return
	}
	if p == sessionsURI && r.Method == http.MethodPost {
		s.login(w, r)
		return
	}
	if !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Basic realm="fakeredfish"`)
		s.fail(w, http.StatusUnauthorized, "Base.1.0.InsufficientPrivilege", "There are insufficient privileges for the account or credentials associated with the current session to perform the requested operation.")
		return
	}
	switch {
	case p == systemsURI && r.Method == http.MethodGet:
		var members []map[string]string
		for _, id := range s.cfg.SystemIDs {
			members = append(members, map[string]string{"@odata.id": systemsURI + "/" + id})
		}
		s.json(w, http.StatusOK, map[string]any{"@odata.id": systemsURI, "@odata.type": "#ComputerSystemCollection.ComputerSystemCollection", "Name": "Computer System Collection", "Members@odata.count": len(members), "Members": members})
	case strings.HasPrefix(p, sessionsURI+"/") && r.Method == http.MethodDelete:
		s.logout(w, r, strings.TrimPrefix(p, sessionsURI+"/"))
	case p == "/redfish/v1/Managers" || strings.HasPrefix(p, "/redfish/v1/Managers/"):
		s.serveManagers(w, r, p)
	case strings.HasPrefix(p, tasksURI+"/") && r.Method == http.MethodGet:
		s.monitor(w, r, strings.TrimPrefix(p, tasksURI+"/"))
	case strings.HasPrefix(p, systemsURI+"/"):
		rest := strings.TrimPrefix(p, systemsURI+"/")
		id, action, _ := strings.Cut(rest, "/")
		if !slices.Contains(s.cfg.SystemIDs, id) {
			s.fail(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", fmt.Sprintf("The resource at the URI %s was not found.", r.URL.Path))
			return
		}
		switch {
		case s.cfg.Media.Style == MediaUnderSystem && id == s.cfg.SystemIDs[0] && strings.HasPrefix(action, "VirtualMedia"):
			s.serveMedia(w, r, p)
		case action == "" && r.Method == http.MethodGet:
			s.getSystem(w, r, id)
		case action == "" && r.Method == http.MethodPatch:
			s.patchSystem(w, r, id)
		case action == "Actions/ComputerSystem.Reset" && r.Method == http.MethodPost:
			s.resetSystem(w, r)
		case action == "" || action == "Actions/ComputerSystem.Reset":
			s.fail(w, http.StatusMethodNotAllowed, "Base.1.0.ActionNotSupported", fmt.Sprintf("The action %s is not supported by the resource.", r.Method))
		default:
			s.fail(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", fmt.Sprintf("The resource at the URI %s was not found.", r.URL.Path))
		}
	default:
		s.fail(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", fmt.Sprintf("The resource at the URI %s was not found.", r.URL.Path))
	}
}

// authorized checks Basic credentials or an X-Auth-Token, in constant
// time.
func (s *Server) authorized(r *http.Request) bool {
	if tok := r.Header.Get("X-Auth-Token"); tok != "" {
		s.mu.Lock()
		defer s.mu.Unlock()
		ok := false
		for t := range s.sessions {
			if subtle.ConstantTimeCompare([]byte(t), []byte(tok)) == 1 {
				ok = true
			}
		}
		return ok
	}
	u, p, ok := r.BasicAuth()
	return ok && s.credentials(u, p)
}

func (s *Server) credentials(u, p string) bool {
	uok := subtle.ConstantTimeCompare([]byte(u), []byte(s.cfg.User))
	pok := subtle.ConstantTimeCompare([]byte(p), []byte(s.cfg.Password))
	return uok&pok == 1
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	var req struct{ UserName, Password string }
	if !s.decode(w, r, &req) {
		return
	}
	if !s.credentials(req.UserName, req.Password) {
		s.fail(w, http.StatusUnauthorized, "Base.1.0.NoValidSession", "There is no valid session established with the implementation.")
		return
	}
	b := make([]byte, 16)
	rand.Read(b)
	tok := hex.EncodeToString(b)
	s.mu.Lock()
	s.nextID++
	id := fmt.Sprint(s.nextID)
	s.sessions[tok] = id
	s.mu.Unlock()
	w.Header().Set("X-Auth-Token", tok)
	w.Header().Set("Location", sessionsURI+"/"+id)
	s.json(w, http.StatusCreated, map[string]any{"@odata.id": sessionsURI + "/" + id, "@odata.type": "#Session.v1_1_0.Session", "Id": id, "UserName": req.UserName})
}

func (s *Server) logout(w http.ResponseWriter, _ *http.Request, id string) {
	s.mu.Lock()
	found := false
	for t, sid := range s.sessions {
		if sid == id {
			delete(s.sessions, t)
			found = true
		}
	}
	s.mu.Unlock()
	if !found {
		s.fail(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", "The session was not found.")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) etagLocked() string { return fmt.Sprintf(`W/"%d"`, s.etag) }

func (s *Server) getSystem(w http.ResponseWriter, r *http.Request, id string) {
	on, err := s.cfg.Hook.Power(r.Context())
	if err != nil {
		s.fail(w, http.StatusInternalServerError, "Base.1.0.InternalError", "The request failed due to an internal service error: "+err.Error())
		return
	}
	state := "Off"
	if on {
		state = "On"
	}
	uri := systemsURI + "/" + id
	s.mu.Lock()
	etag := s.etagLocked()
	if s.stale {
		s.stale = false
		s.etag++
	}
	body := map[string]any{"@odata.id": uri, "@odata.type": "#ComputerSystem.v1_13_0.ComputerSystem", "Id": id, "Name": "Fake system " + id, "PowerState": state,
		"Boot": map[string]any{"BootSourceOverrideEnabled": s.override.enabled, "BootSourceOverrideTarget": s.override.target, "BootSourceOverrideMode": s.override.mode,
			"BootSourceOverrideTarget@Redfish.AllowableValues": bootTargets},
		"Actions": map[string]any{"#ComputerSystem.Reset": map[string]any{"target": uri + "/Actions/ComputerSystem.Reset", "ResetType@Redfish.AllowableValues": s.cfg.ResetTypes}}}
	s.mediaLinks(id, body)
	s.mu.Unlock()
	if !s.cfg.NoETag {
		w.Header().Set("ETag", etag)
	}
	s.json(w, http.StatusOK, body)
}

func (s *Server) patchSystem(w http.ResponseWriter, r *http.Request, _ string) {
	var req map[string]json.RawMessage
	if !s.decode(w, r, &req) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := r.Header.Get("If-Match"); m != "" && !s.cfg.NoETag && m != s.etagLocked() && m != "*" {
		s.failLocked(w, http.StatusPreconditionFailed, "Base.1.0.PreconditionFailed", "The ETag supplied did not match the ETag required to change this resource.")
		return
	}
	bootRaw, ok := req["Boot"]
	if len(req) != 1 || !ok {
		for k := range req {
			if k != "Boot" {
				s.failLocked(w, http.StatusBadRequest, "Base.1.0.PropertyNotWritable", fmt.Sprintf("The property %s is a read only property and cannot be assigned a value.", k))
				return
			}
		}
	}
	var boot map[string]string
	if err := json.Unmarshal(bootRaw, &boot); err != nil {
		s.failLocked(w, http.StatusBadRequest, "Base.1.0.PropertyValueTypeError", "The value for the property Boot is of a different type than the property can accept.")
		return
	}
	next := s.override
	for k, v := range boot {
		var allowed []string
		switch k {
		case "BootSourceOverrideEnabled":
			allowed, next.enabled = bootEnabled, v
		case "BootSourceOverrideTarget":
			allowed, next.target = bootTargets, v
		case "BootSourceOverrideMode":
			allowed, next.mode = bootModes, v
		default:
			s.failLocked(w, http.StatusBadRequest, "Base.1.0.PropertyUnknown", fmt.Sprintf("The property %s is not in the list of valid properties for the resource.", k))
			return
		}
		if !slices.Contains(allowed, v) {
			s.failLocked(w, http.StatusBadRequest, "Base.1.0.PropertyValueNotInList", fmt.Sprintf("The value %s for the property %s is not in the list of acceptable values.", v, k))
			return
		}
	}
	if s.cfg.PatchTaskPolls > 0 {
		s.nextID++
		tk := &task{id: strconv.Itoa(s.nextID), patch: &next, left: s.cfg.PatchTaskPolls, state: "Running"}
		s.tasks[tk.id] = tk
		w.Header().Set("Location", tasksURI+"/"+tk.id+"/Monitor")
		s.json(w, http.StatusAccepted, taskBody(tk))
		return
	}
	s.override = next
	s.etag++
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) resetSystem(w http.ResponseWriter, r *http.Request) {
	var req map[string]string
	if !s.decode(w, r, &req) {
		return
	}
	t, ok := req["ResetType"]
	if !ok || len(req) != 1 {
		s.fail(w, http.StatusBadRequest, "Base.1.0.ActionParameterMissing", "The action ComputerSystem.Reset requires the parameter ResetType to be present in the request body.")
		return
	}
	if !slices.Contains(s.cfg.ResetTypes, t) {
		s.fail(w, http.StatusBadRequest, "Base.1.0.ActionParameterValueNotInList", fmt.Sprintf("The value %s for the parameter ResetType in the action ComputerSystem.Reset is not in the list of acceptable values.", t))
		return
	}
	if s.cfg.TaskPolls > 0 {
		s.mu.Lock()
		s.nextID++
		tk := &task{id: strconv.Itoa(s.nextID), reset: t, left: s.cfg.TaskPolls, state: "Running"}
		s.tasks[tk.id] = tk
		s.mu.Unlock()
		w.Header().Set("Location", tasksURI+"/"+tk.id+"/Monitor")
		s.json(w, http.StatusAccepted, taskBody(tk))
		return
	}
	ctx := r.Context()
	on, err := s.cfg.Hook.Power(ctx)
	if err == nil {
		err = s.apply(ctx, t, on)
	}
	if err != nil {
		s.fail(w, http.StatusInternalServerError, "Base.1.0.InternalError", "The request failed due to an internal service error: "+err.Error())
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// apply runs a reset through the hook. A boot that starts consumes a
// Once override: the hook gets "boot pxe" before it and the override
// goes back to Disabled.
func (s *Server) apply(ctx context.Context, t string, on bool) error {
	boots := (t == "On" && !on) || t == "ForceRestart" || t == "PowerCycle"
	if boots {
		s.mu.Lock()
		o := s.override
		if o.enabled == "Once" {
			s.override.enabled, s.override.target = "Disabled", "None"
			s.etag++
		}
		s.mu.Unlock()
		if o.enabled != "Disabled" && (o.target == "Pxe" || o.target == "Cd") {
			if err := s.cfg.Hook.Set(ctx, "boot", strings.ToLower(o.target)); err != nil {
				return err
			}
		}
	}
	switch t {
	case "On":
		if on {
			return nil
		}
		return s.cfg.Hook.Set(ctx, "power", "1")
	case "ForceOff":
		return s.cfg.Hook.Set(ctx, "power", "0")
	case "GracefulShutdown":
		return s.cfg.Hook.Set(ctx, "shutdown", "1")
	case "ForceRestart":
		if !on {
			return s.cfg.Hook.Set(ctx, "power", "1")
		}
		return s.cfg.Hook.Set(ctx, "reset", "1")
	case "PowerCycle":
		if err := s.cfg.Hook.Set(ctx, "power", "0"); err != nil {
			return err
		}
		return s.cfg.Hook.Set(ctx, "power", "1")
	}
	return fmt.Errorf("reset type %s", t)
}

// decode reads a bounded JSON body into v, answering 400 on bad JSON.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(b) > maxBody || json.Unmarshal(b, v) != nil {
		s.fail(w, http.StatusBadRequest, "Base.1.0.MalformedJSON", "The request body submitted was malformed JSON and could not be parsed by the receiving service.")
		return false
	}
	return true
}

func (s *Server) json(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("OData-Version", "4.0")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (s *Server) failLocked(w http.ResponseWriter, status int, id, msg string) {
	s.json(w, status, errorBody(id, msg))
}

func (s *Server) fail(w http.ResponseWriter, status int, id, msg string) {
	s.json(w, status, errorBody(id, msg))
}

// errorBody is a Redfish error response (DSP0266 "Error responses").
func errorBody(id, msg string) map[string]any {
	return map[string]any{"error": map[string]any{"code": id, "message": msg,
		"@Message.ExtendedInfo": []map[string]any{{"@odata.type": "#Message.v1_0_0.Message", "MessageId": id, "Message": msg, "Severity": "Warning"}}}}
}
