package enrol

import (
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/plasmactl/plasma-node/pxe/secret"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/internal/hostname"
	"github.com/plasmactl/plasma-node/ipam"
	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// Errors of an enrolment that fails closed: nothing is registered.
var (
	// ErrCounterPastWidth: the next number does not fit the name
	// template's width ({n:02} past 99).
	ErrCounterPastWidth = errors.New("the counter is past the name template's width")
	// ErrLimit: the rule enrolled its limit of machines.
	ErrLimit = errors.New("the enrolment rule reached its limit")
	// ErrNameTaken: the name made (a template without {n}) is taken by
	// another registration or enrolment.
	ErrNameTaken = errors.New("the name is taken")
	// ErrNoAddress: the rule's address pool has no free address.
	ErrNoAddress = errors.New("no free address in the pool")
	// ErrRegistered: the machine is registered already.
	ErrRegistered = errors.New("the machine is registered already")
	// ErrNoRule: no rule matches the machine.
	ErrNoRule = errors.New("no enrolment rule matches the machine")
)

var (
	ruleNameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	macPrefix  = regexp.MustCompile(`^[0-9A-Fa-f]{2}([:-][0-9A-Fa-f]{2}){0,5}$`)
	transports = []string{"nvme", "sata", "sas"}
)

// probe is the machine a rule's templates are tried on at [Rule.Check].
var probe = discovery.Report{
	NICs:  []discovery.NIC{{MAC: "52:54:00:00:00:01"}},
	DMI:   discovery.DMI{Vendor: "vendor", Product: "product", Serial: "serial1"},
	Disks: []discovery.Disk{{Name: "sda", Serial: "probe-disk"}},
}

// Check refuses a rule that could not enrol a machine, before it is
// kept: a field of a wrong form, an empty match, a name template that
// makes a name the host name rule refuses (tried with the largest
// counter its width takes and sample machine data) or whose answer the
// installer of the rule's version would refuse with the site's
// settings and the rule's overrides. Errors wrap [ErrInvalidRule] and
// name the rule and the field.
func (r Rule) Check(site registry.Site) error {
	if err := r.check(site); err != nil {
		if r.Name != "" {
			return fmt.Errorf("rule %s: %w", r.Name, err)
		}
		return err
	}
	return nil
}

func (r Rule) check(site registry.Site) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidRule, fmt.Sprintf(format, args...))
	}
	if !ruleNameRE.MatchString(r.Name) {
		return bad("name %q: want %s", r.Name, hostname.Rule)
	}
	switch r.Mode {
	case "", ModeRegister, ModeInstall:
	default:
		return bad("mode %q: want register or install", r.Mode)
	}
	if r.Limit < 0 {
		return bad("limit %d: want 0 (none) or more", r.Limit)
	}
	if err := r.Match.check(); err != nil {
		return bad("match: %v", err)
	}
	if err := r.Disks.check(); err != nil {
		return bad("disks: %v", err)
	}
	if a := r.Address; a != nil {
		if a.Pool == "" || a.Gateway == "" || a.DNS == "" {
			return bad("address: want pool, cidr, gateway and dns")
		}
		if _, err := a.pool(); err != nil {
			return bad("address: %v", err)
		}
	}
	if b := r.BMC; b != nil {
		switch {
		case b.Scheme != "ipmi" && b.Scheme != "redfish":
			return bad("bmc scheme %q: want ipmi or redfish", b.Scheme)
		case secret.ValidateSiteName(b.Secret) != nil:
			return bad("bmc secret %q: want the name of a site secret (a-z, 0-9, '.', '_', '-')", b.Secret)
		case b.Port < 0 || b.Port > 65535:
			return bad("bmc port %d: want 1 to 65535, or none for the protocol's", b.Port)
		case b.Address != "" && b.Address != BMCFromReport:
			return bad("bmc address %q: want %s (the agent's in-band report)", b.Address, BMCFromReport)
		case (registry.BMC{URL: b.Scheme + "://192.0.2.1", User: b.User}).Validate() != nil:
			return bad("bmc: %v", (registry.BMC{URL: b.Scheme + "://192.0.2.1", User: b.User}).Validate())
		}
	}
	t, err := ParseTemplate(r.Hostname)
	if err != nil {
		return err
	}
	return r.checkAnswer(t, site)
}

// checkAnswer makes the probe machine's registration and answer and
// has the installer's rules check them.
func (r Rule) checkAnswer(t Template, site registry.Site) error {
	v := answer.LatestVersion
	if r.Answer != nil && r.Answer.Version != "" {
		var err error
		if v, err = answer.ParseVersion(r.Answer.Version); err != nil || !v.Supported() {
			return fmt.Errorf("%w: answer version %q: want an installer release from %s, such as 9.1", ErrInvalidRule, r.Answer.Version, answer.MinVersion)
		}
	}
	n := max(t.MaxN(), 1)
	name, err := t.Render(Vars{N: n, Site: SiteName(site.Domain), Report: probe})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidRule, err)
	}
	if err := registry.ValidateHostname(name); err != nil {
		return fmt.Errorf("%w: name template %q makes %q: %v", ErrInvalidRule, t, name, err)
	}
	reg := registry.Registration{Name: name, MACs: probe.MACs(), BootDisk: answer.BootDisk{Kind: answer.BootDiskSerial, Value: "probe-disk"}}
	if r.Address != nil {
		p, _ := r.Address.pool()
		addrs, err := p.Allocate(ipam.NewUsed(), 1)
		if err != nil {
			return fmt.Errorf("%w: address pool %s: %v", ErrInvalidRule, r.Address.Pool, err)
		}
		reg.Network = r.Address.network(addrs[0], probe.MACs()[0])
	}
	a, err := registry.Build(r.registration(reg), registry.BuildOptions{Site: site, RootPassword: "probe-password"})
	if err == nil {
		err = answer.Validate(a, v)
	}
	if err != nil {
		return fmt.Errorf("%w: the answer of %q for installer %s: %v", ErrInvalidRule, name, v, err)
	}
	return nil
}

// registration returns reg with what the rule adds to each: its SSH
// keys, and its answer settings over the site's.
func (r Rule) registration(reg registry.Registration) registry.Registration {
	a := r.Answer
	if a == nil {
		return reg
	}
	reg.SSHKeys = append(reg.SSHKeys, a.SSHKeys...)
	if a.Keyboard+a.Country+a.Timezone+a.Mailto != "" || a.Filesystem != nil {
		reg.Settings = &registry.Site{Keyboard: a.Keyboard, Country: a.Country, Timezone: a.Timezone, Mailto: a.Mailto, Filesystem: a.Filesystem}
	}
	return reg
}

func (m Match) check() error {
	if m.empty() {
		return errors.New("empty: a rule must match on something (vendor, product, serial, nics, mac_prefix, disks, memory, cpus or boot_nic)")
	}
	for _, g := range []string{m.Vendor, m.Product, m.Serial} {
		if g != "" && !validGlob(g) {
			return fmt.Errorf("glob %q is malformed", g)
		}
	}
	if m.MACPrefix != "" && !macPrefix.MatchString(m.MACPrefix) {
		return fmt.Errorf("mac_prefix %q: want hex pairs such as 52:54:00", m.MACPrefix)
	}
	for _, rg := range []*Range{m.NICs, m.CPUs} {
		if rg != nil && (rg.Min < 0 || rg.Max < 0 || rg.Max > 0 && rg.Max < rg.Min) {
			return fmt.Errorf("range %d-%d: want 0 <= min <= max", rg.Min, rg.Max)
		}
	}
	if m.Memory != nil && m.Memory.Max > 0 && m.Memory.Max < m.Memory.Min {
		return fmt.Errorf("memory max %s below min %s", m.Memory.Max, m.Memory.Min)
	}
	if b := m.BootNIC; b != nil {
		if b.MACPrefix == "" && b.Driver == "" {
			return errors.New("boot_nic: empty: want mac_prefix or driver")
		}
		if b.MACPrefix != "" && !macPrefix.MatchString(b.MACPrefix) {
			return fmt.Errorf("boot_nic mac_prefix %q: want hex pairs such as 52:54:00", b.MACPrefix)
		}
		if b.Driver != "" && !validGlob(b.Driver) {
			return fmt.Errorf("boot_nic driver glob %q is malformed", b.Driver)
		}
	}
	if d := m.Disks; d != nil {
		if d.Count != nil && (d.Count.Min < 0 || d.Count.Max < 0 || d.Count.Max > 0 && d.Count.Max < d.Count.Min) {
			return fmt.Errorf("disks count %d-%d: want 0 <= min <= max", d.Count.Min, d.Count.Max)
		}
		return d.check()
	}
	return nil
}

func validGlob(g string) bool {
	_, err := pathMatch(g)
	return err == nil
}

func (f DiskFilter) check() error {
	if f.MaxSize > 0 && f.MaxSize < f.MinSize {
		return fmt.Errorf("max_size %s below min_size %s", f.MaxSize, f.MinSize)
	}
	if f.Model != "" && !validGlob(f.Model) {
		return fmt.Errorf("model glob %q is malformed", f.Model)
	}
	if f.Transport != "" && !slices.Contains(transports, f.Transport) {
		return fmt.Errorf("transport %q: want nvme, sata or sas", f.Transport)
	}
	return nil
}

func (d Disks) check() error {
	if b := d.Boot; b != nil {
		if b.Pick != "" && b.Pick != PickSmallest && b.Pick != PickLargest {
			return fmt.Errorf("boot pick %q: want smallest or largest", b.Pick)
		}
		if err := b.check(); err != nil {
			return fmt.Errorf("boot: %w", err)
		}
	}
	for i, p := range d.Pools {
		if p.Count < 0 {
			return fmt.Errorf("pool %s: count %d: want 0 (every disk left) or more", p.Name, p.Count)
		}
		if slices.ContainsFunc(d.Pools[:i], func(o Pool) bool { return o.Name == p.Name }) {
			return fmt.Errorf("pool %s is named twice", p.Name)
		}
		// The pool's name and layout as --pool takes them, on sample disks.
		disks := []string{"D1", "D2", "D3"}
		if p.Layout == registry.LayoutSingle {
			disks = disks[:1]
		}
		if err := (registry.DataPool{Name: p.Name, Layout: p.Layout, Disks: disks}).Validate(); err != nil {
			return err
		}
		if err := p.Disks.check(); err != nil {
			return fmt.Errorf("pool %s: %w", p.Name, err)
		}
	}
	return nil
}
