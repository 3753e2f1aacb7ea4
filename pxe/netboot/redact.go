package netboot

import (
	"cmp"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/discovery"
)

// A redactor masks what identifies a machine (its MACs, serials, UUIDs
// and addresses) in what the window's port shows anyone who reaches it:
// the page, GET /status and GET /timeline. The operator recognises a
// machine by the last characters; the full values are the management
// API's, for a reader with a token.
//
// Structured fields are masked by kind; free text (an event's detail,
// which may quote a backend's reason or a client's request) has every
// identifier of the registrations, their install reports and the
// discovery inbox masked, and then anything shaped like a MAC, a UUID or
// an IP address.
type redactor struct {
	known *strings.Replacer
}

var (
	macShapeRE  = regexp.MustCompile(`(?i)[0-9a-f]{2}(?:[:-][0-9a-f]{2}){5}`)
	uuidShapeRE = regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	// addrShapeRE finds what may be an IP address: dotted digits, or hex
	// groups with at least two colons; netip decides.
	addrShapeRE = regexp.MustCompile(`(?i)\b\d{1,3}(?:\.\d{1,3}){3}\b|[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7}(?:%[0-9a-z]+)?`)
)

// minKnownLen is the shortest identifier the redactor looks for in free
// text: a shorter serial would mask parts of ordinary words, and masks
// to "…" in its own field anyway.
const minKnownLen = 5

// newRedactor returns the redactor of these nodes (their full values)
// and discovery records.
func newRedactor(nodes []backend.Node, recs []discovery.Record) redactor {
	var ids []string
	add := func(s ...string) {
		for _, v := range s {
			if len(v) >= minKnownLen {
				ids = append(ids, v)
			}
		}
	}
	for _, n := range nodes {
		add(n.MACs...)
		add(n.Serial, n.UUID, n.InstallIP, n.StaticAddress, n.Address)
		add(diskSerials(n.BootDisk)...)
		for _, p := range n.Pools {
			add(diskSerials(p)...)
		}
		if n.Install != nil {
			add(n.Install.MACs...)
			add(n.Install.MachineID)
			for _, d := range n.Install.BootDisks {
				add(d.Serial)
			}
			if m := n.Install.Management; m != nil {
				add(m.MAC)
				if m.Address.IsValid() {
					add(m.Address.String(), m.Address.Addr().String())
				}
			}
		}
	}
	for _, r := range recs {
		add(r.ID, r.DMI.Serial, r.DMI.UUID)
		for _, n := range r.NICs {
			add(n.MAC)
		}
		for _, d := range r.Disks {
			add(d.Serial, d.WWN)
		}
	}
	// Longest first, so that an address with its prefix is masked whole
	// before the address alone.
	slices.SortFunc(ids, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	ids = slices.Compact(ids)
	pairs := make([]string, 0, 2*len(ids))
	for _, id := range ids {
		pairs = append(pairs, id, maskID(id))
	}
	return redactor{known: strings.NewReplacer(pairs...)}
}

// maskID masks an identifier as its kind is masked in its own field.
func maskID(s string) string {
	if len(s) == 17 && macShapeRE.MatchString(s) {
		return maskMAC(s)
	}
	if _, err := netip.ParsePrefix(s); err == nil {
		return maskAddr(s)
	}
	if _, err := netip.ParseAddr(s); err == nil {
		return maskAddr(s)
	}
	return maskTail(s, 4)
}

// text masks every identifier in s.
func (r redactor) text(s string) string {
	if r.known != nil {
		s = r.known.Replace(s)
	}
	s = macShapeRE.ReplaceAllStringFunc(s, maskMAC)
	s = uuidShapeRE.ReplaceAllStringFunc(s, func(u string) string { return maskTail(u, 4) })
	return addrShapeRE.ReplaceAllStringFunc(s, func(a string) string {
		if _, err := netip.ParseAddr(a); err != nil {
			return a
		}
		return maskAddr(a)
	})
}

// maskMAC masks a MAC to its last two octets ("…:ad:02").
func maskMAC(m string) string { return maskTail(m, 6) }

// maskAddr masks an IP address, with or without a prefix, to its last
// group ("….17", "…:1"); "" stays "".
func maskAddr(s string) string {
	if s == "" {
		return ""
	}
	a := s
	if p, err := netip.ParsePrefix(s); err == nil {
		a = p.Addr().String()
	}
	if i := strings.LastIndexAny(a, ".:"); i >= 0 && i < len(a)-1 {
		return "…" + a[i:]
	}
	return "…"
}

// event returns what the window's port shows of ev, an allowlist as
// [redactor.node]'s: its MAC and address masked, its detail through
// [redactor.text].
func (r redactor) event(ev BootEvent) BootEvent {
	return BootEvent{Time: ev.Time, Stage: ev.Stage, Node: ev.Node, MAC: maskMAC(ev.MAC), IP: maskAddr(ev.IP), Detail: r.text(ev.Detail)}
}

func (r redactor) events(evs []BootEvent) []BootEvent {
	out := make([]BootEvent, len(evs))
	for i, ev := range evs {
		out[i] = r.event(ev)
	}
	return out
}

// unmatched masks the keys and events of the machines no node is known
// for; two machines whose masked MACs are the same share one entry.
func (r redactor) unmatched(m map[string][]BootEvent) map[string][]BootEvent {
	out := make(map[string][]BootEvent, len(m))
	for mac, evs := range m {
		k := maskMAC(mac)
		out[k] = append(out[k], r.events(evs)...)
	}
	for k, evs := range out {
		slices.SortStableFunc(evs, func(a, b BootEvent) int { return a.Time.Compare(b.Time) })
		out[k] = evs
	}
	return out
}

// snapshot masks a timeline snapshot.
func (r redactor) snapshot(s TimelineSnapshot) TimelineSnapshot {
	out := TimelineSnapshot{Nodes: make(map[string][]BootEvent, len(s.Nodes)), Unmatched: r.unmatched(s.Unmatched), Other: r.events(s.Other)}
	for n, evs := range s.Nodes {
		out.Nodes[n] = r.events(evs)
	}
	return out
}

// report masks a status report: each node's pins, addresses and
// timeline, the unmatched machines and the other events.
func (r redactor) report(rep StatusReport) StatusReport {
	out := rep
	out.Nodes = make([]NodeReport, len(rep.Nodes))
	for i, n := range rep.Nodes {
		out.Nodes[i] = NodeReport{Node: r.node(n.Node), Timeline: r.events(n.Timeline)}
	}
	out.Unmatched, out.Other = r.unmatched(rep.Unmatched), r.events(rep.Other)
	out.Inbox = r.inbox(rep.Inbox)
	return out
}

// node returns what the window's port shows of n: an allowlist, so that
// a field added to [backend.Node] or [answer.InstallReport] is not shown
// until it is added here, shown or masked
// (TestRedactorShowsOnlyTheFieldsItNames). The report's host keys and
// name are for all to see (they are what an SSH client checks); its MACs
// (the pinned NIC names' too), disk serials, machine-id and addresses
// are masked as the pins are; its token and management address are not
// shown.
func (r redactor) node(n backend.Node) backend.Node {
	out := backend.Node{
		Name: n.Name, State: n.State, BootMethod: n.BootMethod, MediaAnswer: n.MediaAnswer,
		Created: n.Created, ConsumedAt: n.ConsumedAt, InstalledAt: n.InstalledAt,
		BootMode: n.BootMode, SecureBoot: n.SecureBoot, HostKeyFingerprints: n.HostKeyFingerprints,

		MACs:   maskAll(n.MACs, maskMAC),
		Serial: maskTail(n.Serial, 4), UUID: maskTail(n.UUID, 4),
		InstallIP: maskAddr(n.InstallIP), StaticAddress: maskAddr(n.StaticAddress), Address: maskAddr(n.Address),
		BootDisk: maskDisks(n.BootDisk), Pools: maskAll(n.Pools, maskDisks),
		Problem: r.text(n.Problem),
	}
	if in := n.Install; in != nil {
		rep := answer.InstallReport{
			Schema: in.Schema, FQDN: in.FQDN, ProductVersion: in.ProductVersion, Kernel: in.Kernel,
			BootMode: in.BootMode, SecureBoot: in.SecureBoot, HostKeys: in.HostKeys,

			MACs:      maskAll(in.MACs, maskMAC),
			MachineID: maskTail(in.MachineID, 4),
		}
		if m := in.Management; m != nil {
			rep.Management = &answer.ReportInterface{Name: m.Name, MAC: maskMAC(m.MAC)}
		}
		if in.BootDisks != nil {
			rep.BootDisks = make([]answer.ReportDisk, len(in.BootDisks))
			for i, d := range in.BootDisks {
				rep.BootDisks[i] = answer.ReportDisk{Name: d.Name, Serial: maskTail(d.Serial, 4), Size: d.Size}
			}
		}
		if len(in.NICNames) > 0 {
			rep.NICNames = make(map[string]string, len(in.NICNames))
			for mac, name := range in.NICNames {
				rep.NICNames[maskMAC(mac)] = name
			}
		}
		out.Install = &rep
	}
	return out
}

// diskSerials returns the serials among the disks of a boot disk
// ("sda", "ask", a serial) or a pool ("NAME=LAYOUT:DISK[,DISK...]").
func diskSerials(s string) []string {
	_, disks, _ := strings.Cut(s, ":")
	if !strings.Contains(s, "=") {
		disks = s
	}
	var out []string
	for d := range strings.SplitSeq(disks, ",") {
		if b, err := answer.ParseBootDisk(d); err == nil && b.Kind == answer.BootDiskSerial {
			out = append(out, b.Value)
		}
	}
	return out
}

// maskDisks masks the serials of a boot disk or a pool.
func maskDisks(s string) string {
	for _, d := range diskSerials(s) {
		s = strings.Replace(s, d, maskTail(d, 4), 1)
	}
	return s
}

func maskAll(s []string, mask func(string) string) []string {
	if s == nil {
		return nil
	}
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = mask(v)
	}
	return out
}
