package pxe

import (
	"github.com/plasmactl/plasma-node/internal/regularfile"
	"github.com/plasmactl/plasma-node/pxe/registry"

	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/plasmactl/plasma-node/internal/usage"
	"github.com/plasmactl/plasma-node/nodes"
)

// Errors callers branch on; both are bad input (exit 2 in the CLI).
var (
	// ErrInvalidHardware: a hardware list that does not parse, or a
	// machine that is not a valid registration. The error names the file
	// and line (or the platform.yaml key) and what is valid.
	ErrInvalidHardware = usage.New("invalid hardware list")
	// ErrNoHardware: a pool needs more machines than the hardware lists
	// have free for it.
	ErrNoHardware = usage.New("not enough machines")
)

// Hardware is one machine of a hardware list with where it was given,
// for messages.
type Hardware struct {
	nodes.Machine
	// BMC is the machine's management controller, nil for none (see
	// [HardwareBMC]).
	BMC *HardwareBMC
	// Where is "FILE:LINE" for a hardware file, or
	// "platform.yaml pools.NAME.hardware[I]".
	Where string
}

var machineKeys = []string{"pool", "macs", "serial", "uuid", "boot_disk", "data_pools", "management_mac", "bmc", "boot_method", "media_answer"}

// ParseHardware reads a hardware file, YAML or JSON (JSON is YAML):
//
//	machines:
//	  - macs: ["52:54:00:00:00:01"]   # one or more of macs, serial, uuid
//	    serial: CZ2D1A0BC3
//	    uuid: 0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0
//	    boot_disk: 25414A800205       # serial, kernel name (sda) or any; omitted: chosen on the console
//	    data_pools: ["tank=mirror:S1,S2"]
//	    management_mac: 52:54:00:00:00:01  # the NIC of a static address (the install network); default: the first of macs
//	    pool: control                 # optional: only for this pool
//	    boot_method: virtual-media    # optional: network or virtual-media (needs a Redfish bmc); default: the site's
//	    media_answer: http            # optional, virtual media: iso (on the medium) or http (from the window); default: the site's, else iso
//	    bmc:                          # optional: see HardwareBMC
//	      url: ipmi://10.0.0.51
//	      user: admin
//	      password_env: RACK1_BMC_PASSWORD
//
// Each machine is checked as the registration it becomes: MACs, serial,
// UUID, boot disk and data pools, and no MAC, serial or UUID is given to
// two machines. name is the file name used in errors.
//
// Errors: [ErrInvalidHardware] naming name:line, the key and what is
// valid.
func ParseHardware(name string, data []byte) ([]Hardware, error) {
	bad := func(line int, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %w: %s", name, line, ErrInvalidHardware, fmt.Sprintf(format, args...))
	}
	if len(data) > maxHardwareFile {
		return nil, bad(1, "larger than %d bytes", maxHardwareFile)
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		line := 1
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			fmt.Sscanf(strings.TrimPrefix(err.Error(), "yaml: "), "line %d:", &line)
		}
		return nil, bad(line, "not YAML or JSON: %v", err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, bad(1, "want a mapping with the key machines, a list of machines")
	}
	top := doc.Content[0]
	var list *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if k.Value != "machines" {
			return nil, bad(k.Line, "unknown key %q (want machines)", k.Value)
		}
		list = v
	}
	if list == nil {
		return nil, bad(top.Line, "no machines key")
	}
	if list.Kind != yaml.SequenceNode {
		return nil, bad(list.Line, "machines: want a list of machines")
	}
	var out []Hardware
	for _, item := range list.Content {
		if item.Kind != yaml.MappingNode {
			return nil, bad(item.Line, "a machine is a mapping of %s", strings.Join(machineKeys, ", "))
		}
		for i := 0; i+1 < len(item.Content); i += 2 {
			k, v := item.Content[i], item.Content[i+1]
			if !slices.Contains(machineKeys, k.Value) {
				return nil, bad(k.Line, "unknown key %q (known: %s)", k.Value, strings.Join(machineKeys, ", "))
			}
			if k.Value == "bmc" {
				continue // parseBMC checks it
			}
			list := k.Value == "macs" || k.Value == "data_pools"
			if list && v.Kind != yaml.SequenceNode {
				return nil, bad(v.Line, "%s: want a list of strings", k.Value)
			}
			if !list && v.Kind != yaml.ScalarNode {
				return nil, bad(v.Line, "%s: want a string", k.Value)
			}
		}
		var m nodes.Machine
		if err := item.Decode(&m); err != nil {
			return nil, bad(item.Line, "%v", err)
		}
		h := Hardware{Machine: m, Where: fmt.Sprintf("%s:%d", name, item.Line)}
		for i := 0; i+1 < len(item.Content); i += 2 {
			if item.Content[i].Value == "bmc" {
				b, err := parseBMC(name, item.Content[i+1])
				if err != nil {
					return nil, err
				}
				h.BMC = b
			}
		}
		if err := check(&h); err != nil {
			return nil, err
		}
		if err := checkBootMethod(h); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	if err := distinct(out); err != nil {
		return nil, err
	}
	return out, nil
}

// maxHardwareFile bounds a hardware file: 4 MiB.
const maxHardwareFile = 4 << 20

// ReadHardware reads and parses the hardware file path.
//
// Errors: [ErrInvalidHardware], also for a file that cannot be read.
func ReadHardware(path string) ([]Hardware, error) {
	data, err := regularfile.Read(path, maxHardwareFile)
	if err != nil {
		return nil, fmt.Errorf("hardware file: %w: %w", ErrInvalidHardware, err)
	}
	return ParseHardware(path, data)
}

// check normalises h's MACs and UUID and checks it as a registration.
func check(h *Hardware) error {
	bad := func(err error) error { return fmt.Errorf("%s: %w: %w", h.Where, ErrInvalidHardware, err) }
	if _, err := registration("machine", h.Machine); err != nil {
		return bad(err)
	}
	if len(h.MACs) == 0 && h.Serial == "" && h.UUID == "" {
		return fmt.Errorf("%s: %w: the machine pins nothing: give macs, serial or uuid, so that only it gets its answer", h.Where, ErrInvalidHardware)
	}
	for i, m := range h.MACs {
		h.MACs[i], _ = registry.NormalizeMAC(m)
	}
	if h.ManagementMAC != "" {
		m, err := registry.NormalizeMAC(h.ManagementMAC)
		if err != nil {
			return bad(fmt.Errorf("management_mac: %w", err))
		}
		if !slices.Contains(h.MACs, m) {
			return bad(fmt.Errorf("management_mac %s is not one of the machine's macs", m))
		}
		h.ManagementMAC = m
	}
	h.UUID = strings.ToLower(strings.TrimSpace(h.UUID))
	h.Serial = strings.TrimSpace(h.Serial)
	return nil
}

// checkBootMethod checks h's boot_method: a known one, and virtual
// media only behind a Redfish BMC; and its media_answer and its bmc's
// media_tls: not with boot_method network, as a registration refuses
// them.
func checkBootMethod(h Hardware) error {
	m, err := registry.ParseBootMethod(h.BootMethod)
	if err != nil {
		return fmt.Errorf("%s: %w: boot_method: %w", h.Where, ErrInvalidHardware, err)
	}
	if _, err := registry.ParseMediaAnswer(h.MediaAnswer); err != nil {
		return fmt.Errorf("%s: %w: media_answer: %w", h.Where, ErrInvalidHardware, err)
	}
	if m == registry.BootNetwork {
		forVM := ""
		switch {
		case h.MediaAnswer != "":
			forVM = "media_answer " + h.MediaAnswer
		case h.BMC != nil && h.BMC.MediaTLS:
			forVM = "bmc.media_tls"
		}
		if forVM != "" {
			return fmt.Errorf("%s: %w: %s is for boot_method virtual-media, and this machine's boot_method is network", h.Where, ErrInvalidHardware, forVM)
		}
	}
	if m != registry.BootVirtualMedia {
		return nil
	}
	why := ""
	switch {
	case h.BMC == nil:
		why = "this machine has no bmc"
	case !strings.HasPrefix(h.BMC.URL, "redfish://"):
		why = "IPMI has no virtual media"
	default:
		return nil
	}
	return fmt.Errorf("%s: %w: boot_method virtual-media needs a Redfish BMC (bmc.url redfish://…), which lends the machine the installer's medium; %s", h.Where, ErrInvalidHardware, why)
}

// distinct refuses a MAC, serial or UUID given to two machines.
func distinct(hs []Hardware) error {
	seen := map[string]string{}
	for _, h := range hs {
		for _, k := range pins(h.Machine) {
			if w, ok := seen[k]; ok {
				return fmt.Errorf("%s: %w: %s is also given to the machine at %s", h.Where, ErrInvalidHardware, k, w)
			}
			seen[k] = h.Where
		}
	}
	return nil
}

// pinLabels returns the machine's identities as the files write them,
// for people: "mac aa:..", "serial S", "uuid U".
func pinLabels(m nodes.Machine) []string {
	var out []string
	for _, mac := range m.MACs {
		out = append(out, "mac "+mac)
	}
	if m.Serial != "" {
		out = append(out, "serial "+m.Serial)
	}
	if m.UUID != "" {
		out = append(out, "uuid "+m.UUID)
	}
	return out
}

// pins returns the machine's identities as keys that compare: "mac
// aa:..", "serial s" (in lower case: serials compare without case),
// "uuid u".
func pins(m nodes.Machine) []string {
	var out []string
	for _, mac := range m.MACs {
		out = append(out, "mac "+mac)
	}
	if m.Serial != "" {
		out = append(out, "serial "+strings.ToLower(m.Serial))
	}
	if m.UUID != "" {
		out = append(out, "uuid "+m.UUID)
	}
	return out
}

// registration returns the registration of machine m as node name.
func registration(name string, m nodes.Machine) (registry.Registration, error) {
	r := registry.Registration{Name: name, Serial: strings.TrimSpace(m.Serial), UUID: strings.ToLower(strings.TrimSpace(m.UUID))}
	for _, mac := range m.MACs {
		n, err := registry.NormalizeMAC(mac)
		if err != nil {
			return r, fmt.Errorf("macs: %w", err)
		}
		r.MACs = append(r.MACs, n)
	}
	bd, err := registry.ParseBootDisk(m.BootDisk)
	if err != nil {
		return r, fmt.Errorf("boot_disk: %w", err)
	}
	r.BootDisk = bd
	for _, s := range m.DataPools {
		dp, err := registry.ParsePoolSpec(s)
		if err != nil {
			return r, fmt.Errorf("data_pools: %w", err)
		}
		r.Pools = append(r.Pools, dp)
	}
	if err := r.Validate(); err != nil {
		return r, err
	}
	return r, nil
}

// MachineID returns the server id of a machine: its first MAC, else
// "serial:<serial>", else "uuid:<uuid>".
func MachineID(m nodes.Machine) string {
	switch {
	case len(m.MACs) > 0:
		return m.MACs[0]
	case m.Serial != "":
		return "serial:" + m.Serial
	case m.UUID != "":
		return "uuid:" + m.UUID
	}
	return ""
}

func machineOf(r registry.Registration) nodes.Machine {
	return nodes.Machine{MACs: r.MACs, Serial: r.Serial, UUID: r.UUID}
}
