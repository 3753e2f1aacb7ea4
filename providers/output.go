package providers

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/tofu"
)

// ServerAttrs are the attribute values of one server in the
// [OutputName] output: literal strings, or tofu.Expr references to the
// server's resource. Nil renders null, which decodes as "".
type ServerAttrs struct {
	ServerID, PublicIP, PrivateIP, Zone, Region, Machine, DisplayName any
	// MAC, PublicMAC and Disks are left out of the output when nil:
	// the private and public MACs and the disk paths, for providers
	// whose API gives them.
	MAC, PublicMAC, Disks any
}

// ServersOutput returns the [OutputName] output for slots, with the
// attributes attrs gives each.
func ServersOutput(slots []Slot, attrs func(Slot) ServerAttrs) tofu.Output {
	m := make(map[string]any, len(slots))
	for _, s := range slots {
		a := attrs(s)
		v := map[string]any{
			"hostname":     s.Hostname,
			"pool":         s.Pool,
			"server_id":    a.ServerID,
			"public_ip":    a.PublicIP,
			"private_ip":   a.PrivateIP,
			"zone":         a.Zone,
			"region":       a.Region,
			"machine":      a.Machine,
			"display_name": a.DisplayName,
		}
		for k, x := range map[string]any{"mac": a.MAC, "public_mac": a.PublicMAC, "disks": a.Disks} {
			if x != nil {
				v[k] = x
			}
		}
		m[s.Hostname] = v
	}
	return tofu.Output{Name: OutputName, Value: m, Description: "The servers, by hostname."}
}

// DecodeServers decodes the [OutputName] output, sorted by hostname. A
// server without a hostname takes its map key. No output at all (an
// empty configuration applied) is no servers.
//
// Errors: [ErrBadOutput] for JSON that is not a map of server objects,
// or a server without a server id.
func DecodeServers(outputs map[string]tofu.OutputValue) ([]Server, error) {
	ov, ok := outputs[OutputName]
	if !ok || len(ov.Value) == 0 || string(ov.Value) == "null" {
		return nil, nil
	}
	var m map[string]Server
	if err := json.Unmarshal(ov.Value, &m); err != nil {
		return nil, fmt.Errorf("decode servers: %w: %v", ErrBadOutput, err)
	}
	out := make([]Server, 0, len(m))
	for k, s := range m {
		if s.Hostname == "" {
			s.Hostname = k
		}
		if strings.TrimSpace(s.Hostname) == "" {
			return nil, fmt.Errorf("decode servers: %w: a server has no hostname", ErrBadOutput)
		}
		if strings.TrimSpace(s.ServerID) == "" {
			return nil, fmt.Errorf("decode servers: %w: server %q has no server_id", ErrBadOutput, k)
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Server) int { return strings.Compare(a.Hostname, b.Hostname) })
	return out, nil
}
