package enrol

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/ipam"
	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// Decision is what enrolment does with one machine of the inbox: the
// rule that takes it and the registration it makes, or why none does.
type Decision struct {
	// Machine is the inbox entry's ID (its lowest MAC).
	Machine string `json:"machine"`
	// Rule is the rule that takes it, empty for none.
	Rule string `json:"rule,omitempty"`
	// Mode is the rule's mode.
	Mode Mode `json:"mode,omitempty"`
	// Name is the registration's name.
	Name string `json:"name,omitempty"`
	// BootDisk is the boot disk's serial.
	BootDisk string `json:"boot_disk,omitempty"`
	// Filesystem is the boot disk's filesystem, the rule's or else the
	// site's: "ext4", "zfs raid0, compress lz4".
	Filesystem string `json:"filesystem,omitempty"`
	// Pools are the data pools, as --pool specs.
	Pools []string `json:"pools,omitempty"`
	// Address is the static address with its prefix, "dhcp" for none.
	Address string `json:"address,omitempty"`
	// BMC is the registration's BMC URL (the address the machine
	// reported, the port), empty without a BMC.
	BMC string `json:"bmc,omitempty"`
	// Reason says why no rule takes the machine or why its enrolment
	// fails closed, empty when it is enrolled.
	Reason string `json:"reason,omitempty"`
	// Registration is what is registered; nil when nothing is.
	Registration *registry.Registration `json:"-"`
	// Err is the enrolment's error: [ErrNoRule], [ErrRegistered],
	// [ErrLimit], [ErrCounterPastWidth], [ErrNameTaken], [ErrNoAddress]
	// or an invalid registration; nil when it is enrolled.
	Err error `json:"-"`
	// BMCSecret names the site secret of the registration's BMC
	// password, empty without a BMC.
	BMCSecret string `json:"-"`
}

// Inputs are what a decision reads besides the rule state and the
// machine.
type Inputs struct {
	// Registrations are the registrations, pending and consumed: their
	// names, addresses and pins are taken.
	Registrations []registry.Registration
	// Site is the site's settings ({site} is its domain's first label).
	Site registry.Site
	// Now is the time of the decision.
	Now time.Time
}

// Decide decides the enrolment of rec under s: the first rule by
// priority that matches it and whose disks it has takes it, its name
// the template's with the next free number, its address the pool's
// lowest free one. It returns s with the rule's counter advanced and
// the name and address held (expired holds dropped), or s unchanged
// when the decision has an error. It is pure.
func Decide(s State, rec discovery.Record, in Inputs) (Decision, State) {
	d := Decision{Machine: rec.ID}
	fail := func(err error) (Decision, State) {
		d.Err, d.Reason, d.Registration, d.Address, d.BMC = err, err.Error(), nil, "", ""
		return d, s
	}
	if name := registeredAs(in.Registrations, rec.Report); name != "" {
		return fail(fmt.Errorf("%w as %s", ErrRegistered, name))
	}
	held := live(s.Held, in.Now)
	if i := slices.IndexFunc(held, func(h Hold) bool { return h.Machine == rec.ID }); i >= 0 {
		return fail(fmt.Errorf("%w: it is being enrolled as %s", ErrRegistered, held[i].Name))
	}
	var r Rule
	var c choice
	var reasons []string
	found := false
	for _, cand := range s.Rules {
		why := cand.Match.Mismatch(rec.Report)
		if why == "" {
			c, why = cand.Disks.choose(rec.Disks)
		}
		if why == "" && cand.BMC != nil && rec.BMCAddress == "" {
			why = noBMCAddress(rec.Report)
		}
		if why != "" {
			reasons = append(reasons, why+" of rule "+cand.Name)
			continue
		}
		r, found = cand, true
		break
	}
	if !found {
		if len(s.Rules) == 0 {
			reasons = []string{"there are no rules"}
		}
		return fail(fmt.Errorf("%w: %s", ErrNoRule, strings.Join(reasons, "; ")))
	}
	d.Rule, d.Mode = r.Name, r.mode()
	cnt := s.Counters[r.Name]
	if r.Limit > 0 && cnt.Enrolled >= r.Limit {
		return fail(fmt.Errorf("rule %s: %w of %d machines", r.Name, ErrLimit, r.Limit))
	}
	name, n, err := r.name(rec.Report, cnt.Next, in, held)
	if err != nil {
		return fail(err)
	}
	d.Name = name
	macs, serial, uuid := rec.Pins()
	reg := registry.Registration{Name: name, Serial: serial, UUID: uuid, Created: in.Now.UTC().Truncate(time.Second), FromDiscovery: true,
		BootDisk: answer.BootDisk{Kind: answer.BootDiskSerial, Value: c.boot.Serial}, Pools: c.pools}
	for _, m := range macs {
		nm, err := registry.NormalizeMAC(m)
		if err != nil {
			return fail(fmt.Errorf("rule %s: a NIC the machine reported cannot be pinned: %w", r.Name, err))
		}
		reg.MACs = append(reg.MACs, nm)
	}
	d.Address = "dhcp"
	var addr netip.Addr
	if r.Address != nil {
		if addr, err = r.Address.next(in.Registrations, held); err != nil {
			return fail(fmt.Errorf("rule %s: %w", r.Name, err))
		}
		mgmt := rec.BootMAC
		if mgmt == "" {
			mgmt = rec.ID
		}
		reg.Network = r.Address.network(addr, mgmt)
		d.Address = reg.Network.CIDR
	}
	if b := r.BMC; b != nil {
		host, port := hostOf(rec.BMCAddress), b.Port
		if port == 0 && rec.BMCKind == b.Scheme {
			port = int(rec.BMCPort) // the host interface's, for its own protocol
		}
		if port != 0 {
			host = net.JoinHostPort(rec.BMCAddress, strconv.Itoa(port))
		}
		reg.BMC = &registry.BMC{URL: b.Scheme + "://" + host, User: b.User, Secret: b.Secret}
		d.BMC, d.BMCSecret = reg.BMC.URL, b.Secret
	}
	reg = r.registration(reg)
	if err := reg.Validate(); err != nil {
		return fail(fmt.Errorf("rule %s: %w", r.Name, err))
	}
	d.BootDisk = c.boot.Serial
	fs := in.Site.Filesystem
	if r.Answer != nil && r.Answer.Filesystem != nil {
		fs = r.Answer.Filesystem
	}
	d.Filesystem = cmp.Or(fs, &registry.Filesystem{}).String()
	for _, p := range c.pools {
		d.Pools = append(d.Pools, p.String())
	}
	d.Registration = &reg
	out := State{Rules: s.Rules, Counters: map[string]Counter{}, Held: held}
	for k, v := range s.Counters {
		out.Counters[k] = v
	}
	next := cnt.Next
	if n > 0 {
		next = n + 1
	}
	out.Counters[r.Name] = Counter{Next: next, Enrolled: cnt.Enrolled + 1}
	h := Hold{Rule: r.Name, Name: name, Machine: rec.ID, Time: in.Now}
	if addr.IsValid() {
		h.Address = addr.String()
	}
	out.Held = append(out.Held, h)
	return d, out
}

// Release returns s without the hold of name and with its rule's
// enrolment count taken back: the registration of name could not be
// written. The hold of a written registration is kept until it expires
// ([HoldTTL]), as enrolments that read the registrations before it was
// written may still decide.
func (s State) Release(name string) State {
	i := slices.IndexFunc(s.Held, func(h Hold) bool { return h.Name == name })
	if i < 0 {
		return s
	}
	h := s.Held[i]
	out := State{Rules: s.Rules, Counters: map[string]Counter{}, Held: slices.Delete(slices.Clone(s.Held), i, i+1)}
	for k, v := range s.Counters {
		out.Counters[k] = v
	}
	if c, ok := out.Counters[h.Rule]; ok && c.Enrolled > 0 {
		c.Enrolled--
		out.Counters[h.Rule] = c
	}
	return out
}

func (r Rule) mode() Mode {
	if r.Mode == "" {
		return ModeRegister
	}
	return r.Mode
}

// live returns the holds not expired at now.
func live(held []Hold, now time.Time) []Hold {
	return slices.DeleteFunc(slices.Clone(held), func(h Hold) bool { return now.Sub(h.Time) >= HoldTTL })
}

// name makes the machine's name: the template with the first number
// from next (1 when 0) whose name no registration or hold takes, and
// that number (0 for a template without {n}).
func (r Rule) name(rep discovery.Report, next int, in Inputs, held []Hold) (string, int, error) {
	t, err := ParseTemplate(r.Hostname)
	if err != nil {
		return "", 0, fmt.Errorf("rule %s: %w", r.Name, err)
	}
	taken := func(name string) bool {
		return slices.ContainsFunc(in.Registrations, func(o registry.Registration) bool { return o.Name == name }) ||
			slices.ContainsFunc(held, func(h Hold) bool { return h.Name == name })
	}
	v := Vars{N: max(next, 1), Site: SiteName(in.Site.Domain), Report: rep}
	for range len(in.Registrations) + len(held) + 1 {
		name, err := t.Render(v)
		if err != nil {
			return "", 0, fmt.Errorf("rule %s: %w", r.Name, err)
		}
		if err := registry.ValidateHostname(name); err != nil {
			return "", 0, fmt.Errorf("rule %s: name template %q makes %q: %w", r.Name, t, name, err)
		}
		switch {
		case !taken(name) && t.Counted():
			return name, v.N, nil
		case !taken(name):
			return name, 0, nil
		case !t.Counted():
			return "", 0, fmt.Errorf("rule %s: %w: %s is another machine's", r.Name, ErrNameTaken, name)
		}
		v.N++
	}
	return "", 0, fmt.Errorf("rule %s: %w: every number tried is taken", r.Name, ErrNameTaken)
}

// next returns the pool's lowest address no registration or hold has.
func (a Address) next(regs []registry.Registration, held []Hold) (netip.Addr, error) {
	p, err := a.pool()
	if err != nil {
		return netip.Addr{}, err
	}
	used := ipam.NewUsed()
	for _, r := range regs {
		if ad, ok := addressOf(r.Network); ok {
			used.Add(ad)
		}
	}
	for _, h := range held {
		if ad, err := netip.ParseAddr(h.Address); err == nil {
			used.Add(ad)
		}
	}
	addrs, err := p.Allocate(used, 1)
	if errors.Is(err, ipam.ErrExhausted) {
		return netip.Addr{}, fmt.Errorf("%w %s (%v)", ErrNoAddress, a.Pool, err)
	}
	if err != nil {
		return netip.Addr{}, err
	}
	return addrs[0], nil
}

// registeredAs returns the name of a registration, pending or consumed,
// that pins one of rep's MACs, its usable DMI serial or its UUID, or
// that an installer of one of them consumed; "" for none.
func registeredAs(regs []registry.Registration, rep discovery.Report) string {
	macs, serial, uuid := rep.Pins()
	for _, r := range regs {
		known := r.KnownMACs()
		if slices.ContainsFunc(macs, func(m string) bool { return slices.Contains(known, m) }) {
			return r.Name
		}
		serials, uuids := []string{r.Serial}, []string{r.UUID}
		if c := r.Consumed; c != nil {
			serials, uuids = append(serials, c.Serial), append(uuids, c.UUID)
		}
		if serial != "" && slices.ContainsFunc(serials, func(s string) bool { return strings.EqualFold(s, serial) }) ||
			uuid != "" && slices.ContainsFunc(uuids, func(u string) bool { return strings.EqualFold(u, uuid) }) {
			return r.Name
		}
	}
	return ""
}

// hostOf writes an address as a URL's host: IPv6 in brackets.
// noBMCAddress is rule test's reason for a BMC rule that does not take
// a machine whose report has no BMC address: what its firmware named.
func noBMCAddress(rep discovery.Report) string {
	if rep.BMCIPMI != "" {
		return "its report has no BMC address (its firmware names an IPMI BMC on " + rep.BMCIPMI + ", which gave the agent no LAN address through /dev/ipmi0; the agent's log says why)"
	}
	return "its report has no BMC address (its firmware names no Redfish host interface with a routable service address and no IPMI BMC)"
}

func hostOf(addr string) string {
	if a, err := netip.ParseAddr(addr); err == nil && a.Is6() {
		return "[" + addr + "]"
	}
	return addr
}

// Preview decides every machine of recs in order, as if each were
// enrolled in turn (so two machines of one rule get successive
// numbers), and stores nothing: what `rule test` shows.
func Preview(s State, recs []discovery.Record, in Inputs) []Decision {
	out := make([]Decision, 0, len(recs))
	for _, rec := range recs {
		var d Decision
		d, s = Decide(s, rec, in)
		out = append(out, d)
	}
	return out
}

// BootDiskText is the boot disk with its filesystem, "VIRT-A (zfs
// raid0)", or "" without a boot disk.
func (d Decision) BootDiskText() string {
	if d.BootDisk == "" || d.Filesystem == "" {
		return d.BootDisk
	}
	return d.BootDisk + " (" + d.Filesystem + ")"
}
