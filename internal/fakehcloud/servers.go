package fakehcloud

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

func (f *Fake) sshKeysRoute(p []string, q url.Values) (any, *apiError) {
	ids := make([]int64, 0, len(f.sshKeys))
	for id := range f.sshKeys {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	render := func(id int64) map[string]any {
		return map[string]any{"id": id, "name": f.sshKeys[id], "fingerprint": fmt.Sprintf("00:%02x", id%256),
			"public_key": "ssh-ed25519 AAAA fake", "labels": map[string]any{}, "created": epoch}
	}
	if len(p) == 2 {
		id, _ := strconv.ParseInt(p[1], 10, 64)
		if _, ok := f.sshKeys[id]; !ok {
			return nil, notFound("ssh key")
		}
		return map[string]any{"ssh_key": render(id)}, nil
	}
	var items []any
	for _, id := range ids {
		if n := q.Get("name"); n == "" || n == f.sshKeys[id] {
			items = append(items, render(id))
		}
	}
	return page("ssh_keys", items, q), nil
}

func (f *Fake) serverJSON(s *Server) map[string]any {
	loc := slices.Index(Locations, s.Location) + 1
	var image any
	if s.Image != "" {
		image = imageJSON(s.Image)
	}
	st := serverTypeJSON(s.ServerType)
	st["name"] = s.ServerType
	labels := s.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	return map[string]any{
		"id": s.ID, "name": s.Name, "status": s.Status, "created": epoch,
		"public_net": map[string]any{
			"ipv4":         map[string]any{"id": s.ID + 1, "ip": s.PublicIPv4, "blocked": false, "dns_ptr": "static.fake"},
			"ipv6":         map[string]any{"id": s.ID + 2, "ip": fmt.Sprintf("2001:db8:0:%x::/64", s.ID%0xffff), "blocked": false, "dns_ptr": []any{}},
			"floating_ips": []any{}, "firewalls": []any{},
		},
		"private_net": []any{}, "server_type": st, "included_traffic": 0,
		"outgoing_traffic": 0, "ingoing_traffic": 0, "backup_window": nil, "rescue_enabled": false,
		"iso": nil, "locked": false, "location": locationJSON(s.Location), "image": image,
		"protection": map[string]any{"delete": false, "rebuild": false}, "labels": labels,
		"volumes": []any{}, "primary_disk_size": 40, "placement_group": nil, "load_balancers": []any{},
		"datacenter": map[string]any{
			"id": loc, "name": s.Location + "-dc1", "description": s.Location + " DC 1",
			"location":     locationJSON(s.Location),
			"server_types": map[string]any{"supported": []any{1, 2, 3, 4}, "available": []any{1, 2, 3, 4}, "available_for_migration": []any{1, 2, 3, 4}},
		},
	}
}

type createRequest struct {
	Name       string            `json:"name"`
	ServerType json.RawMessage   `json:"server_type"`
	Image      json.RawMessage   `json:"image"`
	Location   string            `json:"location"`
	Datacenter string            `json:"datacenter"`
	Labels     map[string]string `json:"labels"`
	SSHKeys    []int64           `json:"ssh_keys"`
}

// idOrName decodes an IDOrName: a JSON number or string.
func idOrName(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n int64
	if json.Unmarshal(raw, &n) == nil {
		return strconv.FormatInt(n, 10)
	}
	return ""
}

func invalid(field, msg string) *apiError {
	return &apiError{http.StatusUnprocessableEntity, "invalid_input", field + ": " + msg}
}

func (f *Fake) serversRoute(r *http.Request, p []string) (any, *apiError) {
	q := r.URL.Query()
	if len(p) == 1 {
		switch r.Method {
		case http.MethodGet:
			return f.listServers(q), nil
		case http.MethodPost:
			return f.createServer(r)
		}
		return nil, badMethod()
	}
	id, err := strconv.ParseInt(p[1], 10, 64)
	s := f.servers[id]
	if err != nil || s == nil {
		return nil, notFound("server")
	}
	if len(p) == 2 {
		return f.serverRoute(r, s)
	}
	if p[2] == "actions" && len(p) == 3 && r.Method == http.MethodGet {
		return page("actions", nil, q), nil
	}
	if p[2] != "actions" || len(p) != 4 || r.Method != http.MethodPost {
		return nil, notFound("endpoint")
	}
	return f.serverAction(r, s, p[3])
}

// listServers is GET /servers, by id, of the name asked for if any.
func (f *Fake) listServers(q url.Values) any {
	ids := make([]int64, 0, len(f.servers))
	for id, s := range f.servers {
		if n := q.Get("name"); n == "" || n == s.Name {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	items := make([]any, 0, len(ids))
	for _, id := range ids {
		items = append(items, f.serverJSON(f.servers[id]))
	}
	return page("servers", items, q)
}

// serverRoute is /servers/{id}: get, update (name, labels) or delete s.
func (f *Fake) serverRoute(r *http.Request, s *Server) (any, *apiError) {
	switch r.Method {
	case http.MethodGet:
		return map[string]any{"server": f.serverJSON(s)}, nil
	case http.MethodPut:
		var req struct {
			Name   string             `json:"name"`
			Labels *map[string]string `json:"labels"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			return nil, invalid("body", err.Error())
		}
		if req.Name != "" {
			for _, o := range f.servers {
				if o.ID != s.ID && o.Name == req.Name {
					return nil, &apiError{http.StatusConflict, "uniqueness_error", "server name is already used"}
				}
			}
			s.Name = req.Name
		}
		if req.Labels != nil {
			s.Labels = clone(*req.Labels)
		}
		return map[string]any{"server": f.serverJSON(s)}, nil
	case http.MethodDelete:
		delete(f.servers, s.ID)
		return map[string]any{"action": f.action("delete_server", s.ID)}, nil
	}
	return nil, badMethod()
}

// serverAction is POST /servers/{id}/actions/{action}.
func (f *Fake) serverAction(r *http.Request, s *Server, action string) (any, *apiError) {
	switch action {
	case "poweroff", "shutdown":
		s.Status = "off"
	case "poweron", "reboot", "reset":
		s.Status = "running"
	case "change_type":
		var req struct {
			ServerType string `json:"server_type"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || !slices.Contains(ServerTypes, req.ServerType) {
			return nil, invalid("server_type", "unknown server type")
		}
		if s.Status != "off" {
			return nil, &apiError{http.StatusConflict, "server_not_stopped", "server must be stopped"}
		}
		s.ServerType = req.ServerType
	default:
		return nil, notFound("action " + action)
	}
	return map[string]any{"action": f.action(action+"_server", s.ID)}, nil
}

func (f *Fake) createServer(r *http.Request) (any, *apiError) {
	var req createRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		return nil, invalid("body", err.Error())
	}
	if req.Name == "" {
		return nil, invalid("name", "is required")
	}
	for _, o := range f.servers {
		if o.Name == req.Name {
			return nil, &apiError{http.StatusConflict, "uniqueness_error", "server name is already used"}
		}
	}
	st := idOrName(req.ServerType)
	if !slices.Contains(ServerTypes, st) {
		if n, err := strconv.Atoi(st); err == nil && n >= 1 && n <= len(ServerTypes) {
			st = ServerTypes[n-1]
		} else {
			return nil, invalid("server_type", "unknown server type")
		}
	}
	img := idOrName(req.Image)
	found := ""
	for _, n := range Images {
		if img == n || img == strconv.FormatInt(imageID(n), 10) {
			found = n
		}
	}
	if found == "" {
		return nil, invalid("image", "unknown image")
	}
	loc := req.Location
	if loc == "" && req.Datacenter != "" {
		loc, _, _ = strings.Cut(req.Datacenter, "-")
	}
	if loc != "" && !slices.Contains(Locations, loc) {
		return nil, invalid("location", "unknown location")
	}
	for _, k := range req.SSHKeys {
		if _, ok := f.sshKeys[k]; !ok {
			return nil, invalid("ssh_keys", "unknown ssh key")
		}
	}
	s := f.create(req.Name, st, found, loc, req.Labels)
	return map[string]any{
		"server": f.serverJSON(s), "action": f.action("create_server", s.ID),
		"next_actions": []any{f.action("start_server", s.ID)}, "root_password": nil,
	}, nil
}
