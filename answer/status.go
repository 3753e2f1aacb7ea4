package answer

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"time"
)

// NodeStatus is one registration's state, as `list` and GET /status show
// it. It holds no secret.
type NodeStatus struct {
	Name     string    `json:"name"`
	State    string    `json:"state"` // pending, consumed or installed
	MACs     []string  `json:"macs"`
	BootDisk string    `json:"boot_disk"`
	Pools    []string  `json:"pools"`
	Serial   string    `json:"serial,omitempty"`
	UUID     string    `json:"uuid,omitempty"`
	Created  time.Time `json:"created"`
	// ConsumedAt and InstallIP are set once an answer was served.
	ConsumedAt *time.Time `json:"consumed_at,omitempty"`
	InstallIP  string     `json:"install_ip,omitempty"`
	// InstalledAt is set once the installer reported success.
	InstalledAt *time.Time `json:"installed_at,omitempty"`
}

// States of a [NodeStatus].
const (
	StatePending   = "pending"
	StateConsumed  = "consumed"
	StateInstalled = "installed"
)

// Status lists every registration of the state folder, pending ones
// first, each sorted by name.
func Status(ctx context.Context, reg *Registry, stateDir string) ([]NodeStatus, error) {
	pending, err := reg.Pending(ctx)
	if err != nil {
		return nil, err
	}
	consumed, err := reg.Consumed(ctx)
	if err != nil {
		return nil, err
	}
	installed, err := Installed(ctx, filepath.Join(stateDir, EventsFileName))
	if err != nil {
		return nil, err
	}
	out := []NodeStatus{}
	for _, r := range append(pending, consumed...) {
		s := NodeStatus{Name: r.Name, State: StatePending, MACs: nonNilStrings(r.MACs), BootDisk: r.BootDisk.String(), Pools: []string{}, Serial: r.Serial, UUID: r.UUID, Created: r.Created}
		for _, p := range r.Pools {
			s.Pools = append(s.Pools, p.String())
		}
		if c := r.Consumed; c != nil {
			t := c.Time
			s.State, s.ConsumedAt, s.InstallIP = StateConsumed, &t, c.ClientIP
			if at, ok := installed[r.Name]; ok && !at.Before(c.Time) {
				s.State, s.InstalledAt = StateInstalled, &at
			}
		}
		out = append(out, s)
	}
	return out, nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (h *Handler) status(w http.ResponseWriter, r *http.Request) {
	st, err := Status(r.Context(), h.cfg.Registry, h.cfg.StateDir)
	if err != nil {
		h.log.Error("status failed", "err", err)
		reply(w, http.StatusInternalServerError, "status failed; see the server log")
		return
	}
	h.record(Event{Kind: EventRequest, ClientIP: clientIP(r), Status: http.StatusOK, Detail: "status"})
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(map[string]any{"nodes": st})
}
