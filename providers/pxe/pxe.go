package pxe

import (
	"github.com/plasmactl/plasma-node/pxe/registry"

	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/tofu"
)

// Name is the provider's name in platform.yaml.
const Name = "pxe"

// ResourceType is the Type of the changes a plan lists.
const ResourceType = "node-provisioner_registration"

// Provider is the bare-metal provider. The zero value is ready to use.
type Provider struct {
	// Dial opens the registry of a platform whose provisioner is reached
	// over its API. Nil: node-provisioner's client (package pxe/client).
	Dial Dialer
	// Getenv reads the BMC passwords a hardware list names by variable.
	// Nil: os.Getenv.
	Getenv func(string) string
}

var (
	_ providers.Provider        = (*Provider)(nil)
	_ providers.Direct          = (*Provider)(nil)
	_ providers.InstallReporter = (*Provider)(nil)
	_ providers.Starter         = (*Provider)(nil)
)

// Name returns "pxe".
func (*Provider) Name() string { return Name }

// Requirement returns the zero value: there is no OpenTofu plugin.
func (*Provider) Requirement() tofu.RequiredProvider { return tofu.RequiredProvider{} }

// Credentials returns no environment: no API is called.
func (*Provider) Credentials(*nodes.Platform, func(string) string) (map[string]string, error) {
	return map[string]string{}, nil
}

// Configure refuses: the servers are registrations, not tofu resources.
//
// Errors: always [providers.ErrDirect].
func (*Provider) Configure(providers.Input) (*tofu.Config, error) {
	return nil, fmt.Errorf("provider pxe: %w: bare-metal nodes are node-provisioner registrations, made by provisioning a pool from a hardware list", providers.ErrDirect)
}

// Destructive returns nil: nothing is updated in place.
func (*Provider) Destructive() tofu.DestructiveFunc { return nil }

var idRE = regexp.MustCompile(`^(([0-9a-f]{2}:){5}[0-9a-f]{2}|serial:[!-~]{1,128}|uuid:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$`)

// ValidateServerID accepts a machine id as [MachineID] makes it: a MAC
// address in lower case, "serial:<serial>" or "uuid:<uuid>".
//
// Errors: [providers.ErrInvalidServerID].
func (*Provider) ValidateServerID(id string) error {
	if !idRE.MatchString(id) {
		return fmt.Errorf("server id %q: %w: want a machine's MAC (aa:bb:cc:dd:ee:ff), serial:<DMI serial> or uuid:<DMI UUID>", id, providers.ErrInvalidServerID)
	}
	return nil
}

// Servers decodes a servers output like every provider, though a pxe
// platform never has one.
//
// Errors: [providers.ErrBadOutput].
func (*Provider) Servers(outputs map[string]tofu.OutputValue) ([]providers.Server, error) {
	return providers.DecodeServers(outputs)
}

// plan is a [providers.DirectPlan] of registrations to write.
type plan struct {
	reg Registry
	// bmcPasswords are the passwords of the new registrations with a
	// BMC, by name.
	bmcPasswords map[string]string
	summary      tofu.Summary
	create       []registry.Registration
	servers      []providers.Server
}

func (p *plan) Summary() tofu.Summary { return p.summary }

// Apply writes the new registrations (0600, in a 0700 folder) and
// returns every server of the layout.
func (p *plan) Apply(ctx context.Context) ([]providers.Server, error) {
	for _, r := range p.create {
		var err error
		if pw := p.bmcPasswords[r.Name]; pw != "" {
			_, err = registerWithBMC(ctx, p.reg, r, pw)
		} else {
			_, err = p.reg.Register(ctx, r, registry.RegisterOptions{})
		}
		if err != nil {
			return nil, fmt.Errorf("register %s: %w", r.Name, err)
		}
	}
	return p.servers, nil
}

// Plan lays out the pools' servers ([providers.Slots]). An adopted
// server keeps its registration (a node whose registration is gone is
// never registered again: its machine may be installed and must not be
// reinstalled). A new slot whose hostname already has a registration (a
// run stopped between writing it and the node file, or one made by
// hand) takes that one. Any other new slot takes the next free machine
// for its pool: first the pool's hardware in platform.yaml, then those of
// in.HardwareFile that name the pool or none ([HardwareDiscovered]: the
// discovery inbox's, oldest first). A machine is free when no
// node has it as server id and no registration of another name pins
// it. Adopted servers beyond a pool's count are planned as deletes.
//
// Errors: [ErrInvalidHardware], [ErrNoHardware], [providers.ErrInvalidInput].
func (pv *Provider) Plan(ctx context.Context, in providers.DirectInput) (providers.DirectPlan, error) {
	log := in.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	reg, err := pv.open(ctx, in.Location, log)
	if err != nil {
		return nil, err
	}
	slots, err := providers.Slots(in.Input)
	if err != nil {
		return nil, err
	}
	hw, err := hardware(ctx, in, reg, log)
	if err != nil {
		return nil, err
	}
	regs, err := registrations(ctx, reg)
	if err != nil {
		return nil, err
	}
	inet, err := installNetwork(in)
	if err != nil {
		return nil, err
	}
	l := layout{in: in, hw: hw, regs: regs, taken: map[string]string{}, need: map[string]int{}, kept: map[string]bool{},
		p: &plan{reg: reg, bmcPasswords: map[string]string{}}, getenv: pv.Getenv, net: inet, log: log}
	if l.getenv == nil {
		l.getenv = os.Getenv
	}
	// Machines already taken: by a node, or by a registration.
	for _, e := range in.Existing {
		l.taken["id "+e.ServerID] = "node " + hostOf(in.Platform.Name, e)
	}
	for name, r := range regs {
		for _, k := range pins(machineOf(r)) {
			l.taken[k] = "registration " + name
		}
	}
	for _, s := range slots {
		if err := l.place(s); err != nil {
			return nil, err
		}
	}
	if len(l.need) > 0 {
		return nil, notEnough(l.need, l.takenNotes(), in.HardwareFile)
	}
	for _, e := range in.Existing {
		if !l.kept[e.ServerID] {
			l.p.summary.Deletes = append(l.p.summary.Deletes, tofu.Change{Address: ResourceType + "." + hostOf(in.Platform.Name, e), Type: ResourceType, ImportID: e.ServerID})
		}
	}
	slices.SortFunc(l.p.servers, func(a, b providers.Server) int { return strings.Compare(a.Hostname, b.Hostname) })
	return l.p, nil
}

// layout is [Provider.Plan] under way: the slots placed so far on the
// machines of the hardware lists.
type layout struct {
	in   providers.DirectInput
	hw   []Hardware
	regs map[string]registry.Registration
	// taken says who has a machine, by pin ("mac ...") or "id <machine id>".
	taken map[string]string
	// need counts the machines each pool lacks.
	need map[string]int
	// kept are the server ids of the adopted servers.
	kept map[string]bool
	p    *plan
	// getenv reads BMC passwords.
	getenv func(string) string
	// net is the platform's install network; nil: addresses by DHCP.
	net *installNet
	log *slog.Logger
}

// free reports whether machine h is neither a node's nor pinned by a
// registration.
func (l *layout) free(h Hardware) bool { return l.holder(h) == "" }

// holder says who has machine h ("node pxe-control-001", "registration
// pve1"); "" when it is free.
func (l *layout) holder(h Hardware) string {
	if who, ok := l.taken["id "+MachineID(h.Machine)]; ok {
		return who
	}
	for _, k := range pins(h.Machine) {
		if who, ok := l.taken[k]; ok {
			return who
		}
	}
	return ""
}

// plannedHolder starts the holder of a machine this plan gives a new node.
const plannedHolder = "new node "

// takenNotes says, for each pool that lacks machines, which of the
// machines it could take are had already and by whom.
func (l *layout) takenNotes() map[string][]string {
	out := map[string][]string{}
	for pool := range l.need {
		for _, h := range l.hw {
			if h.Pool != "" && h.Pool != pool {
				continue
			}
			if who := l.holder(h); who != "" && !strings.HasPrefix(who, plannedHolder) {
				out[pool] = append(out[pool], fmt.Sprintf("%s (%s) is %s's", h.Where, strings.Join(pinLabels(h.Machine), ", "), who))
			}
		}
	}
	return out
}

// place lays out slot s: an adopted server as it is, a new one on the
// registration of its hostname or else on the next free machine of its
// pool (counted in need when there is none).
func (l *layout) place(s providers.Slot) error {
	srv := providers.Server{Hostname: s.Hostname, Pool: s.Pool, Machine: l.in.Pools[s.Pool].Machine, ServerID: s.ServerID}
	r, registered := l.regs[s.Hostname]
	switch {
	case s.Adopted():
		l.kept[s.ServerID] = true
	case registered:
		srv.ServerID = MachineID(machineOf(r))
		if srv.ServerID == "" {
			return fmt.Errorf("registration %s in %s pins no machine: %w: unregister it (node-provisioner unregister %s) or pin it", s.Hostname, l.in.Location, ErrInvalidHardware, s.Hostname)
		}
		l.p.summary.Creates = append(l.p.summary.Creates, change(s.Hostname, machineOf(r), "node file; the registration exists"))
		if r.Network != nil {
			if p, err := netip.ParsePrefix(r.Network.CIDR); err == nil {
				srv.PrivateIP = p.Addr().String()
			}
		} else if l.net != nil {
			l.log.Warn("registration has no static address: its machine takes the site DHCP server's lease, not its node's private_ip", "node", s.Hostname, "install_network", l.net.name)
		}
	default:
		i := slices.IndexFunc(l.hw, func(h Hardware) bool { return (h.Pool == "" || h.Pool == s.Pool) && l.free(h) })
		if i < 0 {
			l.need[s.Pool]++
			return nil
		}
		h := l.hw[i]
		for _, k := range append(pins(h.Machine), "id "+MachineID(h.Machine)) {
			l.taken[k] = plannedHolder + s.Hostname
		}
		var err error
		if r, err = registration(s.Hostname, h.Machine); err != nil {
			return fmt.Errorf("%s: %w: %w", h.Where, ErrInvalidHardware, err)
		}
		if h.BMC != nil {
			var pw string
			if r.BMC, pw, err = h.BMC.Registration(l.getenv); err != nil {
				return fmt.Errorf("%s: %w", h.Where, err)
			}
			l.p.bmcPasswords[r.Name] = pw
		}
		if r.BootMethod, err = registry.ParseBootMethod(h.BootMethod); err != nil {
			r.BootMethod = "" // the site's
		}
		if r.MediaAnswer, err = registry.ParseMediaAnswer(h.MediaAnswer); err != nil {
			r.MediaAnswer = "" // the site's
		}
		if l.net != nil {
			addr, err := l.in.Allocate(l.net.name)
			if err != nil {
				return err
			}
			if err := l.net.static(&r, addr, h.ManagementMAC); err != nil {
				return fmt.Errorf("%s: %w", h.Where, err)
			}
			srv.PrivateIP = addr.String()
		}
		registered = true
		l.p.create = append(l.p.create, r)
		srv.ServerID = MachineID(h.Machine)
		note := "boot disk " + r.BootDisk.String()
		if r.Network != nil {
			note += "; static address " + r.Network.CIDR
		}
		l.p.summary.Creates = append(l.p.summary.Creates, change(s.Hostname, h.Machine, note))
	}
	if registered && len(r.MACs) > 0 {
		srv.MAC = r.MACs[0]
		if m := r.ManagementMAC(); m != "" {
			srv.MAC = m // the NIC its static address is on
		}
	}
	l.p.servers = append(l.p.servers, srv)
	return nil
}

// notEnough is the error of pools that need more machines than the
// hardware lists give.
func notEnough(need map[string]int, taken map[string][]string, hardwareFile string) error {
	var parts []string
	for _, name := range sortedKeys(need) {
		part := fmt.Sprintf("pool %s needs %d more machine(s)", name, need[name])
		if t := taken[name]; len(t) > 0 {
			part += " (already taken: " + strings.Join(t, "; ") + ")"
		}
		parts = append(parts, part)
	}
	src := "pools.<pool>.hardware in platform.yaml"
	switch hardwareFile {
	case "":
	case HardwareDiscovered:
		src = "the discovery inbox (boot more machines in a discovery window) or " + src
	default:
		src = hardwareFile + " or " + src
	}
	return fmt.Errorf("%s: %w: add machines (each with macs, serial or uuid) to %s, or lower the count", strings.Join(parts, "; "), ErrNoHardware, src)
}

func change(host string, m nodes.Machine, note string) tofu.Change {
	return tofu.Change{Address: fmt.Sprintf("%s.%s (%s; %s)", ResourceType, host, strings.Join(pinLabels(m), ", "), note), Type: ResourceType}
}

func hostOf(platform string, e providers.Existing) string {
	if e.Hostname != "" {
		return e.Hostname
	}
	return providers.Hostname(platform, e.Pool, e.Index)
}

// hardware returns the machines to take new servers from: each pool's
// own list in platform.yaml (sorted by pool name), then the file's.
func hardware(ctx context.Context, in providers.DirectInput, reg Registry, log *slog.Logger) ([]Hardware, error) {
	var out []Hardware
	for _, name := range sortedKeys(in.Pools) {
		for i, m := range in.Pools[name].Hardware {
			m.MACs = slices.Clone(m.MACs)
			m.Pool = name
			h := Hardware{Machine: m, Where: fmt.Sprintf("%s pools.%s.hardware[%d]", in.Platform.File(), name, i)}
			if h.Where[0] == ' ' {
				h.Where = "platform.yaml" + h.Where
			}
			if err := check(&h); err != nil {
				return nil, err
			}
			if err := checkBootMethod(h); err != nil {
				return nil, err
			}
			out = append(out, h)
		}
	}
	if in.HardwareFile == HardwareDiscovered {
		hs, err := discoveredHardware(ctx, reg)
		if err != nil {
			return nil, err
		}
		out = append(out, hs...)
	} else if in.HardwareFile != "" {
		hs, err := ReadHardware(in.HardwareFile)
		if err != nil {
			return nil, err
		}
		for _, h := range hs {
			if _, ok := in.Pools[h.Pool]; h.Pool != "" && !ok {
				// Kept for a pool a later run may configure.
				log.Warn("machine kept for a pool that is not configured", "at", h.Where, "pool", h.Pool, "known", strings.Join(sortedKeys(in.Pools), ", "))
			}
		}
		out = append(out, hs...)
	}
	return out, distinct(out)
}

// Remove deletes the pending registrations of in.Existing's servers and
// returns their hostnames; consumed ones are kept, the record of an
// install. A server without a registration is skipped.
func (pv *Provider) Remove(ctx context.Context, in providers.DirectInput) ([]string, error) {
	reg, err := pv.open(ctx, in.Location, in.Logger)
	if err != nil {
		return nil, err
	}
	regs, err := registrations(ctx, reg)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range in.Existing {
		h := hostOf(in.Platform.Name, e)
		r, ok := regs[h]
		if !ok || r.Consumed != nil {
			continue
		}
		if err := reg.Unregister(ctx, h); err != nil && !errors.Is(err, registry.ErrNotFound) {
			return out, fmt.Errorf("unregister %s: %w", h, err)
		}
		out = append(out, h)
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
