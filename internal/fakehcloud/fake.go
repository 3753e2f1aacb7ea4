package fakehcloud

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Fixed catalogue the fake serves.
var (
	// ServerTypes are the server type names known, all x86.
	ServerTypes = []string{"cx22", "cx32", "cpx11", "cpx21"}
	// Images are the system image names known.
	Images = []string{"ubuntu-24.04", "debian-12"}
	// Locations are the location names known.
	Locations = []string{"fsn1", "nbg1", "hel1"}
)

// Server is the fake's view of one server.
type Server struct {
	// ID is the server's id, and Name its unique name.
	ID   int64
	Name string
	// Status is "running" or "off".
	Status string
	// ServerType, Image and Location are names from [ServerTypes],
	// [Images] and [Locations]; Image is empty for a server made without
	// one.
	ServerType string
	Image      string
	Location   string
	// PublicIPv4 is the server's public address.
	PublicIPv4 string
	// Labels are the server's labels.
	Labels map[string]string
}

// Fake is a running fake API. Its methods are safe for concurrent use.
type Fake struct {
	srv   *httptest.Server
	token string

	mu       sync.Mutex
	servers  map[int64]*Server
	sshKeys  map[int64]string
	nextID   int64
	actionID int64
	calls    []string
	hold     *hold
}

// hold is a pause on server creation set by [Fake.HoldCreates].
type hold struct {
	arrived chan struct{}
	release chan struct{}
}

// Start starts a fake on a loopback port that accepts only requests
// bearing token. Close it when done.
func Start(token string) *Fake {
	f := &Fake{token: token, servers: map[int64]*Server{}, sshKeys: map[int64]string{}, nextID: 100000}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	return f
}

// Endpoint is the API base URL to give the plugin, ending in /v1.
func (f *Fake) Endpoint() string { return f.srv.URL + "/v1" }

// Close stops the fake.
func (f *Fake) Close() { f.srv.Close() }

// AddServer creates a running server directly, as if made outside tofu,
// and returns it. Unknown type, image or location names are kept as
// given.
func (f *Fake) AddServer(name, serverType, image, location string) Server {
	f.mu.Lock()
	defer f.mu.Unlock()
	return *f.create(name, serverType, image, location, nil)
}

// AddServerID is [Fake.AddServer] with the server's id chosen: id must
// not be in use (it panics otherwise, a test's mistake).
func (f *Fake) AddServerID(id int64, name, serverType, image, location string) Server {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.servers[id]; ok {
		panic(fmt.Sprintf("fakehcloud: server id %d in use", id))
	}
	next := f.nextID
	f.nextID = id - 1
	s := *f.create(name, serverType, image, location, nil)
	f.nextID = max(next, id)
	return s
}

// AddSSHKey adds an SSH key and returns its id.
func (f *Fake) AddSSHKey(name string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	f.sshKeys[f.nextID] = name
	return f.nextID
}

// Servers returns the servers, sorted by id.
func (f *Fake) Servers() []Server {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Server, 0, len(f.servers))
	for _, s := range f.servers {
		c := *s
		c.Labels = clone(s.Labels)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Server) int { return int(a.ID - b.ID) })
	return out
}

// HoldCreates makes every later server create (POST /v1/servers) wait
// until release is called, as a slow cloud would; arrived receives once
// for each create that starts waiting (it has room for 16; more are not
// reported). It lets a test act while a tofu apply is in progress. Call
// release once.
func (f *Fake) HoldCreates() (arrived <-chan struct{}, release func()) {
	h := &hold{arrived: make(chan struct{}, 16), release: make(chan struct{})}
	f.mu.Lock()
	f.hold = h
	f.mu.Unlock()
	return h.arrived, func() {
		f.mu.Lock()
		if f.hold == h {
			f.hold = nil
		}
		f.mu.Unlock()
		close(h.release)
	}
}

// Calls returns the requests served, as "METHOD /path", in order.
func (f *Fake) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func clone(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// create adds a server; f.mu is held.
func (f *Fake) create(name, serverType, image, location string, labels map[string]string) *Server {
	f.nextID++
	if location == "" {
		location = Locations[0]
	}
	s := &Server{ID: f.nextID, Name: name, Status: "running", ServerType: serverType, Image: image,
		Location: location, PublicIPv4: fmt.Sprintf("203.0.113.%d", (f.nextID%250)+1), Labels: clone(labels)}
	f.servers[s.ID] = s
	return s
}

type apiError struct {
	status  int
	code    string
	message string
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	if h := f.hold; h != nil && r.Method == http.MethodPost && strings.Trim(r.URL.Path, "/") == "v1/servers" {
		f.mu.Unlock()
		select {
		case h.arrived <- struct{}{}:
		default:
		}
		select {
		case <-h.release:
		case <-r.Context().Done():
			return
		}
		f.mu.Lock()
	}
	defer f.mu.Unlock()
	f.calls = append(f.calls, r.Method+" "+r.URL.Path)
	if r.Header.Get("Authorization") != "Bearer "+f.token {
		writeErr(w, apiError{http.StatusUnauthorized, "unauthorized", "unable to authenticate"})
		return
	}
	path, ok := strings.CutPrefix(r.URL.Path, "/v1/")
	if !ok {
		writeErr(w, apiError{http.StatusNotFound, "not_found", "no such endpoint"})
		return
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	body, aerr := f.route(r, parts)
	if aerr != nil {
		writeErr(w, *aerr)
		return
	}
	status := http.StatusOK
	if r.Method == http.MethodPost && len(parts) == 1 {
		status = http.StatusCreated
	}
	if body == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func writeErr(w http.ResponseWriter, e apiError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": e.code, "message": e.message, "details": nil}})
}

func notFound(what string) *apiError {
	return &apiError{http.StatusNotFound, "not_found", what + " not found"}
}

func badMethod() *apiError {
	return &apiError{http.StatusMethodNotAllowed, "method_not_allowed", "method not allowed"}
}

func (f *Fake) route(r *http.Request, p []string) (any, *apiError) {
	q := r.URL.Query()
	get := r.Method == http.MethodGet
	switch {
	case p[0] == "server_types" && get && len(p) == 1:
		return list("server_types", filterNames(ServerTypes, q.Get("name")), q, serverTypeJSON)
	case p[0] == "server_types" && get && len(p) == 2:
		for i, n := range ServerTypes {
			if p[1] == strconv.Itoa(i+1) {
				return map[string]any{"server_type": serverTypeJSON(n)}, nil
			}
		}
		return nil, notFound("server type")
	case p[0] == "images" && get && len(p) == 1:
		return list("images", filterNames(Images, q.Get("name")), q, imageJSON)
	case p[0] == "images" && get && len(p) == 2:
		for _, n := range Images {
			if p[1] == strconv.FormatInt(imageID(n), 10) {
				return map[string]any{"image": imageJSON(n)}, nil
			}
		}
		return nil, notFound("image")
	case p[0] == "locations" && get && len(p) == 1:
		return list("locations", filterNames(Locations, q.Get("name")), q, locationJSON)
	case p[0] == "ssh_keys" && get:
		return f.sshKeysRoute(p, q)
	case p[0] == "servers":
		return f.serversRoute(r, p)
	case p[0] == "actions" && get && len(p) == 1:
		var acts []any
		for _, id := range q["id"] {
			n, _ := strconv.ParseInt(id, 10, 64)
			acts = append(acts, actionJSON(n, "unknown", 0))
		}
		return page("actions", acts, q), nil
	case p[0] == "actions" && get && len(p) == 2:
		n, err := strconv.ParseInt(p[1], 10, 64)
		if err != nil {
			return nil, notFound("action")
		}
		return map[string]any{"action": actionJSON(n, "unknown", 0)}, nil
	}
	return nil, notFound("endpoint " + r.Method + " /v1/" + strings.Join(p, "/"))
}

func filterNames(all []string, name string) []string {
	if name == "" {
		return all
	}
	if slices.Contains(all, name) {
		return []string{name}
	}
	return nil
}

// list pages names rendered by render.
func list(key string, names []string, q map[string][]string, render func(string) map[string]any) (any, *apiError) {
	items := make([]any, 0, len(names))
	for _, n := range names {
		items = append(items, render(n))
	}
	return page(key, items, q), nil
}

// page returns items' page (query page, per_page; default 1 and 25) with
// meta.pagination as the API gives it.
func page(key string, items []any, q map[string][]string) map[string]any {
	pg, per := atoi(q, "page", 1), atoi(q, "per_page", 25)
	if per > 50 {
		per = 50
	}
	total := len(items)
	last := max(1, (total+per-1)/per)
	lo, hi := min((pg-1)*per, total), min(pg*per, total)
	next, prev := any(nil), any(nil)
	if pg < last {
		next = pg + 1
	}
	if pg > 1 {
		prev = pg - 1
	}
	if items == nil {
		items = []any{}
	}
	return map[string]any{
		key: items[lo:hi],
		"meta": map[string]any{"pagination": map[string]any{
			"page": pg, "per_page": per, "previous_page": prev, "next_page": next,
			"last_page": last, "total_entries": total,
		}},
	}
}

func atoi(q map[string][]string, k string, def int) int {
	if v := q[k]; len(v) > 0 {
		if n, err := strconv.Atoi(v[0]); err == nil && n > 0 {
			return n
		}
	}
	return def
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Format(time.RFC3339)

func serverTypeJSON(name string) map[string]any {
	id := slices.Index(ServerTypes, name) + 1
	locs := make([]any, 0, len(Locations))
	for i, l := range Locations {
		locs = append(locs, map[string]any{"id": i + 1, "name": l, "deprecation": nil})
	}
	return map[string]any{
		"id": id, "name": name, "description": strings.ToUpper(name), "category": "shared",
		"cores": 2 * id, "memory": float64(4 * id), "disk": 40 * id, "storage_type": "local",
		"cpu_type": "shared", "architecture": "x86", "included_traffic": 21990232555520,
		"prices": []any{}, "deprecated": false, "deprecation": nil, "locations": locs,
	}
}

func imageID(name string) int64 { return int64(161547000 + slices.Index(Images, name) + 1) }

func imageJSON(name string) map[string]any {
	flavor, ver, _ := strings.Cut(name, "-")
	return map[string]any{
		"id": imageID(name), "status": "available", "type": "system", "name": name,
		"description": name, "image_size": nil, "disk_size": 5, "created": epoch,
		"created_from": nil, "bound_to": nil, "os_flavor": flavor, "os_version": ver,
		"architecture": "x86", "rapid_deploy": true, "protection": map[string]any{"delete": false},
		"deprecated": nil, "deleted": nil, "labels": map[string]any{},
	}
}

func locationJSON(name string) map[string]any {
	id := slices.Index(Locations, name) + 1
	return map[string]any{
		"id": id, "name": name, "description": "Fake " + name, "country": "DE", "city": name,
		"latitude": 50.0, "longitude": 10.0, "network_zone": "eu-central",
	}
}

func actionJSON(id int64, command string, resource int64) map[string]any {
	res := []any{}
	if resource != 0 {
		res = append(res, map[string]any{"id": resource, "type": "server"})
	}
	return map[string]any{
		"id": id, "status": "success", "command": command, "progress": 100,
		"started": epoch, "finished": epoch, "error": nil, "resources": res,
	}
}

// action returns a finished action; f.mu is held.
func (f *Fake) action(command string, server int64) map[string]any {
	f.actionID++
	return actionJSON(f.actionID, command, server)
}
