package fakescaleway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"
)

// Server is the fake's view of one Elastic Metal server.
type Server struct {
	// ID is its UUID and Zone its zone ("fr-par-2").
	ID, Zone string
	// Name is its name, which a PATCH changes; Tags its tags.
	Name string
	Tags []string
	// ProjectID is its project's UUID.
	ProjectID string
	// OfferID and OSID are the UUIDs of its offer and installed OS, from
	// [Offers] and [OSes].
	OfferID, OSID string
	// IPv4 is its public address.
	IPv4 string
	// SSHKeyIDs are the keys it was installed with.
	SSHKeyIDs []string
}

// Offers and OSes are the catalogue the fake serves, by UUID.
var (
	Offers = map[string]string{"a5065ba4-dde2-45f3-adec-1ebbb27b766b": "EM-A115X-SSD"}
	OSes   = map[string]string{"96e5f0f2-d216-4de2-8a15-68730d877885": "Ubuntu 24.04"}
)

// Fake is a running fake API. Its methods are safe for concurrent use.
type Fake struct {
	srv    *httptest.Server
	secret string

	mu      sync.Mutex
	servers map[string]*Server
	nextIP  int
	calls   []string
}

// Start starts a fake on a loopback port that accepts only requests
// whose X-Auth-Token is secretKey. Close it when done.
func Start(secretKey string) *Fake {
	f := &Fake{secret: secretKey, servers: map[string]*Server{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	return f
}

// Endpoint is the API URL to give the plugin (the provider block's
// api_url, platform.yaml's infrastructure.api.uri).
func (f *Fake) Endpoint() string { return f.srv.URL }

// Close stops the fake.
func (f *Fake) Close() { f.srv.Close() }

// AddServer adds a delivered, installed server, as if made outside tofu.
func (f *Fake) AddServer(s Server) Server {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := s
	c.Tags = slices.Clone(s.Tags)
	f.servers[s.ID] = &c
	return s
}

// Servers returns the servers, sorted by id.
func (f *Fake) Servers() []Server {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Server, 0, len(f.servers))
	for _, s := range f.servers {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b Server) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Calls returns the calls made so far, as "METHOD /path" without the
// query.
func (f *Fake) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// fail writes the API's error shape.
func fail(w http.ResponseWriter, code int, typ, resource, id, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	body := map[string]any{"message": msg, "type": typ}
	if resource != "" {
		body["resource"], body["resource_id"] = resource, id
	}
	_ = json.NewEncoder(w).Encode(body)
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// serve records the call, checks the token and routes it.
func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls = append(f.calls, r.Method+" "+r.URL.Path)
	f.mu.Unlock()
	switch tok := r.Header.Get("X-Auth-Token"); {
	case tok == "":
		fail(w, http.StatusUnauthorized, "denied_authentication", "", "", "authentication is denied")
		return
	case tok != f.secret:
		fail(w, http.StatusUnauthorized, "denied_authentication", "", "", "invalid authentication token")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		fail(w, http.StatusBadRequest, "invalid_request_error", "", "", "cannot read the body")
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	// baremetal/v1/zones/{zone}/{kind}/{id}
	if len(parts) < 5 || parts[0] != "baremetal" || parts[2] != "zones" {
		fail(w, http.StatusNotFound, "not_found", "", "", "route not found")
		return
	}
	zone, kind, id := parts[3], parts[4], ""
	if len(parts) > 5 {
		id = parts[5]
	}
	switch {
	case parts[1] == "v1" && kind == "servers" && id == "" && r.Method == http.MethodPost:
		f.create(w, zone, body)
	case parts[1] == "v1" && kind == "servers" && id != "" && len(parts) == 6:
		f.server(w, r, zone, id, body)
	case parts[1] == "v1" && kind == "offers" && id == "" && r.Method == http.MethodGet:
		f.offers(w, zone)
	case parts[1] == "v1" && kind == "offers" && id != "" && r.Method == http.MethodGet:
		f.offer(w, zone, id)
	case parts[1] == "v1" && kind == "os" && id != "" && r.Method == http.MethodGet:
		f.os(w, zone, id)
	case parts[1] == "v3" && kind == "server-private-networks" && id == "" && r.Method == http.MethodGet:
		reply(w, map[string]any{"server_private_networks": []any{}, "total_count": 0})
	default:
		fail(w, http.StatusNotFound, "not_found", "", "", "route not found")
	}
}

// server answers GET and PATCH of one server.
func (f *Fake) server(w http.ResponseWriter, r *http.Request, zone, id string, body []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.servers[id]
	if !ok || s.Zone != zone {
		fail(w, http.StatusNotFound, "not_found", "baremetal_server", id, "resource is not found")
		return
	}
	switch r.Method {
	case http.MethodGet:
	case http.MethodDelete:
		delete(f.servers, id)
		v := s.view()
		v["status"] = "deleting"
		reply(w, v)
		return
	case http.MethodPatch:
		var p struct {
			Name        *string   `json:"name"`
			Description *string   `json:"description"`
			Tags        *[]string `json:"tags"`
			Protected   *bool     `json:"protected"`
			UserData    *string   `json:"user_data"`
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			fail(w, http.StatusBadRequest, "invalid_arguments", "", "", fmt.Sprintf("invalid body: %v", err))
			return
		}
		if p.Name != nil {
			s.Name = *p.Name
		}
		if p.Tags != nil {
			s.Tags = slices.Clone(*p.Tags)
		}
	default:
		fail(w, http.StatusMethodNotAllowed, "invalid_request_error", "", "", "method not allowed")
		return
	}
	reply(w, s.view())
}

// view is the server's JSON, as the API returns it.
func (s *Server) view() map[string]any {
	now := time.Now().UTC().Format(time.RFC3339)
	v := map[string]any{
		"id": s.ID, "organization_id": s.ProjectID, "project_id": s.ProjectID, "name": s.Name, "description": "",
		"updated_at": now, "created_at": now, "status": "ready", "offer_id": s.OfferID, "offer_name": Offers[s.OfferID],
		"tags": s.Tags, "domain": s.ID + ".fr-par-2.baremetal.scw.cloud", "boot_type": "normal", "zone": s.Zone,
		"ping_status": "ping_status_up", "options": []any{}, "rescue_server": nil, "protected": false, "user_data": nil,
		"ips": []any{map[string]any{"id": s.ID[:8] + "-0000-4000-8000-000000000004", "address": s.IPv4, "reverse": "",
			"version": "IPv4", "reverse_status": "active", "reverse_status_message": ""}},
		"install": nil,
	}
	if s.OSID != "" {
		v["install"] = map[string]any{"os_id": s.OSID, "hostname": s.Name, "ssh_key_ids": s.SSHKeyIDs, "status": "completed",
			"user": "ubuntu", "service_user": "", "service_url": "", "partitioning_schema": nil}
	}
	return v
}

func (f *Fake) offer(w http.ResponseWriter, zone, id string) {
	if _, ok := Offers[id]; !ok {
		fail(w, http.StatusNotFound, "not_found", "baremetal_offer", id, "resource is not found")
		return
	}
	reply(w, offerView(zone, id))
}

// offers answers GET .../offers: the whole catalogue on one page.
func (f *Fake) offers(w http.ResponseWriter, zone string) {
	ids := slices.Sorted(maps.Keys(Offers))
	out := make([]any, 0, len(ids))
	for _, id := range ids {
		out = append(out, offerView(zone, id))
	}
	reply(w, map[string]any{"offers": out, "total_count": len(out)})
}

// offerView is an offer's JSON.
func offerView(zone, id string) map[string]any {
	name := Offers[id]
	return map[string]any{"id": id, "name": name, "stock": "available", "bandwidth": 1000000000, "commercial_range": "aluminium",
		"price_per_hour": nil, "price_per_month": nil, "cpus": []any{}, "memories": []any{}, "quota_name": "baremetal_servers",
		"persistent_memories": []any{}, "raid_controllers": []any{}, "incompatible_os_ids": []any{}, "subscription_period": "hourly",
		"operation_path": "", "fee": nil, "options": []any{}, "private_bandwidth": 1000000000, "shared_bandwidth": false,
		"tags": []any{}, "gpus": []any{}, "enable": true, "zone": zone, "disks": []any{}}
}

func (f *Fake) os(w http.ResponseWriter, zone, id string) {
	name, ok := OSes[id]
	if !ok {
		fail(w, http.StatusNotFound, "not_found", "baremetal_os", id, "resource is not found")
		return
	}
	field := map[string]any{"editable": true, "required": false, "default_value": nil}
	reply(w, map[string]any{"id": id, "name": name, "version": "24.04", "logo_url": "", "ssh": field, "user": field,
		"password": field, "service_user": field, "service_password": field, "enabled": true, "license_required": false,
		"allowed": true, "custom_partitioning_supported": true, "zone": zone})
}
