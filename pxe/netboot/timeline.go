package netboot

import (
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/events"
)

// Bounds of a [Timeline].
const (
	// DefaultTimelineLimit is how many events a [Timeline] keeps per node
	// and per MAC address when its Limit is zero.
	DefaultTimelineLimit = 100
	// timelineMaxKeys is how many MAC addresses (and, apart, how many
	// nodes) a [Timeline] follows; past it, the one quiet the longest is
	// forgotten, so a network full of PXE clients cannot grow it.
	timelineMaxKeys = 1024
	// maxDetailLen is the longest detail a [BootEvent] keeps, in bytes;
	// longer ones are cut.
	maxDetailLen = 256
)

// BootEvent is one step of one machine's network boot.
type BootEvent struct {
	// Time is when it happened.
	Time time.Time `json:"time"`
	// Stage is the step: a kind of [events.Kind] (a boot step, or
	// the answer-side kind it was ingested from).
	Stage events.Kind `json:"stage"`
	// MAC is the machine's MAC address (normalised), when known.
	MAC string `json:"mac,omitempty"`
	// Node is the registration's name, when known.
	Node string `json:"node,omitempty"`
	// IP is the address the request came from, when it came from the
	// machine itself (TFTP, HTTP, the installer); never a DHCP relay's.
	IP string `json:"ip,omitempty"`
	// Detail says what happened, in words. It may hold text a client sent
	// (a Range header, an unparsable MAC): show it escaped.
	Detail string `json:"detail,omitempty"`
}

// TimelineSnapshot is a copy of a [Timeline]'s events.
type TimelineSnapshot struct {
	// Nodes holds each node's events, oldest first.
	Nodes map[string][]BootEvent `json:"nodes"`
	// Unmatched holds the events of MAC addresses no node is known for
	// (machines the window does not serve), oldest first.
	Unmatched map[string][]BootEvent `json:"unmatched"`
	// Other holds events with neither MAC nor node, oldest first.
	Other []BootEvent `json:"other"`
}

// Timeline keeps, in memory, the recent boot events of every machine, by
// MAC address and by node name. When an event names both, the MAC is
// linked to the node: the MAC's earlier events join the node's timeline
// and later events of that MAC name the node. Likewise an event naming a
// client IP and a MAC links the IP to the MAC: the earlier events of that
// IP that named no MAC (TFTP downloads, which come before the iPXE script
// says its MAC) join the MAC's timeline, and later ones name the MAC
// until another event links the IP elsewhere. It is bounded (see
// [DefaultTimelineLimit] and timelineMaxKeys) and safe for concurrent
// use. The zero value is ready; a nil *Timeline records nothing. It does
// not persist anything.
type Timeline struct {
	// Limit is how many events are kept per node and per MAC. Zero means
	// [DefaultTimelineLimit]. Set it before first use.
	Limit int
	// Now returns the time of recorded events; nil means time.Now. Set it
	// before first use.
	Now func() time.Time
	// OnRecord, when set, is called with each event recorded (not with
	// those ingested from history), after it was added, from the
	// recording goroutine. Set it before first use.
	OnRecord func(BootEvent)

	mu    sync.Mutex
	nodes map[string][]BootEvent
	macs  map[string][]BootEvent
	other []BootEvent
	// unattributed are requests that named no MAC and that no client
	// address may attribute (see Ingest); Snapshot shows them with other.
	unattributed []BootEvent
	// macOrder and nodeOrder order the keys of macs and nodes by their
	// newest event, so that eviction finds the quietest in O(1).
	macOrder, nodeOrder keyList
	// spare is the cleared timeline of the last key evicted, for the
	// next new key: a storm of new MACs reuses it instead of allocating.
	spare  []BootEvent
	nodeOf map[string]string // MAC → node
	nodeAt map[string]string // client IP → node, from answer events
	macAt  map[string]string // client IP → MAC, from events naming both
}

// RecordFrom adds an event for a machine: its MAC address (any form
// [normalizeMAC] accepts; empty when unknown), its node (empty when
// unknown), the stage and a detail. A MAC that does not parse or a name
// that is not valid is kept in the detail instead. Control characters in
// the detail become spaces and it is cut at maxDetailLen. A request that
// came from the machine's own address ip (empty or not an IP address:
// unknown), such as a TFTP download, which names no MAC, joins the
// timeline of the MAC that IP is linked to, now or once an event links it.
func (t *Timeline) RecordFrom(ip, mac, node string, stage events.Kind, detail string) {
	if t == nil {
		return
	}
	t.record(t.now(), ip, mac, node, stage, detail)
}

// record is RecordFrom at a given time.
func (t *Timeline) record(at time.Time, ip, mac, node string, stage events.Kind, detail string) {
	if t == nil {
		return
	}
	ev := BootEvent{Time: at.UTC(), Stage: stage, Detail: detail}
	ev.MAC, ev.Node, ev.Detail = cleanKeys(mac, node, detail)
	ev.IP = cleanIP(ip)
	t.add(ev)
	if t.OnRecord != nil {
		t.OnRecord(ev)
	}
}

// cleanIP returns ip in its canonical form, or "" for anything that is
// not a unicast address (unknown, unspecified, malformed).
func cleanIP(ip string) string {
	if ip == "" {
		return "" // the DHCP server's events: ParseAddr would allocate its error
	}
	a, err := netip.ParseAddr(ip)
	if err != nil || a.IsUnspecified() || a.IsMulticast() {
		return ""
	}
	return a.Unmap().String()
}

func cleanKeys(mac, node, detail string) (string, string, string) {
	var notes []string
	if mac != "" && !canonicalMAC(mac) {
		m, err := normalizeMAC(mac)
		if err != nil {
			notes = append(notes, "unparsable MAC "+quoteShort(mac))
			m = ""
		}
		mac = m
	}
	if node != "" && validateNodeName(node) != nil {
		notes = append(notes, "invalid node name "+quoteShort(node))
		node = ""
	}
	if len(notes) > 0 {
		detail = strings.Join(append(notes, detail), "; ")
	}
	return mac, node, cleanDetail(detail)
}

func quoteShort(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return `"` + cleanDetail(s) + `"`
}

// canonicalMAC reports whether mac is already in the form
// [normalizeMAC] returns (aa:bb:cc:dd:ee:ff, lower case), as
// net.HardwareAddr.String gives it: the DHCP server's events skip the
// regular expression.
func canonicalMAC(mac string) bool {
	if len(mac) != 17 {
		return false
	}
	for i := 0; i < 17; i++ {
		c := mac[i]
		if i%3 == 2 {
			if c != ':' {
				return false
			}
			continue
		}
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// cleanDetail turns control characters (and invalid UTF-8) into spaces
// and cuts the text at maxDetailLen bytes on a rune boundary.
func cleanDetail(s string) string {
	if plainDetail(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) {
			r = ' '
		}
		if b.Len()+utf8.RuneLen(r) > maxDetailLen {
			break
		}
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}

// plainDetail reports whether cleanDetail would return s unchanged:
// printable ASCII within maxDetailLen, not starting or ending with a
// space.
func plainDetail(s string) bool {
	if len(s) > maxDetailLen || (s != "" && (s[0] == ' ' || s[len(s)-1] == ' ')) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func (t *Timeline) now() time.Time {
	if t.Now != nil {
		return t.Now().UTC()
	}
	return time.Now().UTC()
}

func (t *Timeline) limit() int {
	if t.Limit > 0 {
		return t.Limit
	}
	return DefaultTimelineLimit
}

// add stores ev (its keys already clean).
func (t *Timeline) add(ev BootEvent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.nodes == nil {
		t.nodes, t.macs = map[string][]BootEvent{}, map[string][]BootEvent{}
		t.nodeOf, t.nodeAt, t.macAt = map[string]string{}, map[string]string{}, map[string]string{}
	}
	if ev.MAC == "" && ev.IP != "" {
		ev.MAC = t.macAt[ev.IP]
	}
	if ev.MAC != "" && ev.Node == "" {
		ev.Node = t.nodeOf[ev.MAC]
	}
	if ev.MAC != "" && ev.Node != "" && t.nodeOf[ev.MAC] != ev.Node {
		t.link(ev.MAC, ev.Node)
	}
	if ev.MAC != "" && ev.IP != "" && t.macAt[ev.IP] != ev.MAC {
		t.linkIP(ev.IP, ev.MAC)
	}
	switch {
	case ev.MAC == "" && ev.Node == "":
		t.other = t.insert(t.other, ev)
	default:
		if ev.MAC != "" {
			t.putMAC(ev.MAC, ev)
			t.evict(t.macs, &t.macOrder, ev.MAC, func(k string) { delete(t.nodeOf, k) })
		}
		if ev.Node != "" {
			t.putNode(ev.Node, ev)
			t.evict(t.nodes, &t.nodeOrder, ev.Node, nil)
		}
	}
}

// addUnattributed stores ev, which names no MAC and no node, with the
// unattributed events for good: unlike add, it is never filed by its
// client address, now or when the address is linked later.
func (t *Timeline) addUnattributed(ev BootEvent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.unattributed = t.insert(t.unattributed, ev)
}

// link ties mac to node: the MAC's events that named no node join the
// node's timeline.
func (t *Timeline) link(mac, node string) {
	t.nodeOf[mac] = node
	evs := t.macs[mac]
	for i := range evs {
		if evs[i].Node == "" {
			evs[i].Node = node
			t.putNode(node, evs[i])
		}
	}
}

// linkIP ties a client IP to mac: the IP's events that named neither a
// MAC nor a node leave the unattributed ones for the MAC's timeline (and
// its node's, when the MAC is linked to one).
func (t *Timeline) linkIP(ip, mac string) {
	if len(t.macAt) >= timelineMaxKeys {
		clear(t.macAt)
	}
	t.macAt[ip] = mac
	node := t.nodeOf[mac]
	kept := t.other[:0]
	for _, ev := range t.other {
		if ev.IP != ip || ev.MAC != "" || ev.Node != "" {
			kept = append(kept, ev)
			continue
		}
		ev.MAC, ev.Node = mac, node
		t.putMAC(mac, ev)
		if node != "" {
			t.putNode(node, ev)
		}
	}
	clear(t.other[len(kept):])
	t.other = kept
}

// insert adds ev in time order and drops the oldest events past the limit.
func (t *Timeline) insert(list []BootEvent, ev BootEvent) []BootEvent {
	list = append(list, ev)
	if n := len(list); n > 1 && list[n-2].Time.After(ev.Time) {
		sort.SliceStable(list, func(i, j int) bool { return list[i].Time.Before(list[j].Time) })
	}
	if over := len(list) - t.limit(); over > 0 {
		list = slices.Delete(list, 0, over)
	}
	return list
}

// fresh returns l, or the spare timeline when l is nil (a new key).
func (t *Timeline) fresh(l []BootEvent) []BootEvent {
	if l == nil && t.spare != nil {
		l, t.spare = t.spare, nil
	}
	return l
}

// putMAC adds ev to the timeline of mac.
func (t *Timeline) putMAC(mac string, ev BootEvent) {
	l := t.insert(t.fresh(t.macs[mac]), ev)
	t.macs[mac] = l
	t.macOrder.touch(mac, l[len(l)-1].Time)
}

// putNode adds ev to the timeline of node.
func (t *Timeline) putNode(node string, ev BootEvent) {
	l := t.insert(t.fresh(t.nodes[node]), ev)
	t.nodes[node] = l
	t.nodeOrder.touch(node, l[len(l)-1].Time)
}

// evict forgets the key whose newest event is the oldest, other than
// keep, while m holds more than timelineMaxKeys keys. order holds m's
// keys by their newest event. The forgotten key's events, cleared, are
// kept as the spare for the next new key.
func (t *Timeline) evict(m map[string][]BootEvent, order *keyList, keep string, forget func(string)) {
	for len(m) > timelineMaxKeys {
		oldest, ok := order.oldestExcept(keep)
		if !ok {
			return
		}
		if l := m[oldest]; cap(l) > 0 {
			clear(l[:cap(l)])
			t.spare = l[:0]
		}
		delete(m, oldest)
		order.remove(oldest)
		if forget != nil {
			forget(oldest)
		}
	}
}

// Snapshot returns a copy of every event: by node, by MAC address not
// linked to a node, and the rest.
func (t *Timeline) Snapshot() TimelineSnapshot {
	s := TimelineSnapshot{Nodes: map[string][]BootEvent{}, Unmatched: map[string][]BootEvent{}, Other: []BootEvent{}}
	if t == nil {
		return s
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, evs := range t.nodes {
		s.Nodes[k] = slices.Clone(evs)
	}
	for k, evs := range t.macs {
		if t.nodeOf[k] == "" {
			s.Unmatched[k] = slices.Clone(evs)
		}
	}
	s.Other = append(append(s.Other, t.other...), t.unattributed...)
	sort.SliceStable(s.Other, func(i, j int) bool { return s.Other[i].Time.Before(s.Other[j].Time) })
	return s
}

// Ingest adds events of the answer server's event log (see
// [the backend's [backend.Recorder]]) to the timeline, each at its own time:
//   - an answer or a refusal ([events.Answer], [events.Refused])
//     becomes a [events.Answer] event (a refused webhook, a [events.Webhook]
//     one), filed under the node and under the first posted MAC the
//     timeline knows (else the first posted MAC);
//   - a served answer also ties its client IP to the node, so that a
//     later first-boot request from that IP, which names no node, is
//     filed under it ([events.FirstBoot]);
//   - the installer's report ([events.Installed]) becomes a
//     [events.Webhook] event;
//   - a request refused as malformed (400) or for its method (405) that
//     names no node and no MAC stays with the unattributed events: it is
//     not filed under a node by its client address;
//   - a request naming MACs but no node is filed by its MACs, never under
//     the node its address was answered for.
//
// Other kinds are kept with the kind as their stage.
func (t *Timeline) Ingest(evs ...backend.Event) {
	if t == nil {
		return
	}
	for _, e := range evs {
		stage, detail := ingestStage(e)
		if e.ClientIP != "" {
			detail += " (from " + e.ClientIP + ")"
		}
		node := e.Node
		var macs []string
		for m := range strings.SplitSeq(e.MAC, ",") {
			if n, err := normalizeMAC(m); err == nil {
				macs = append(macs, n)
			}
		}
		// A malformed request (400) or one of the wrong method (405) that
		// names neither a node nor a MAC stays unattributed.
		named := node == "" && len(macs) == 0 && (e.Status == 400 || e.Status == 405)
		t.mu.Lock()
		// Only a request naming no MAC (a first-boot script's) is filed
		// under the node its address was answered for: one naming MACs
		// is about those machines, whatever address it came from.
		if node == "" && e.ClientIP != "" && !named && len(macs) == 0 {
			node = t.nodeAt[e.ClientIP]
		}
		mac := ""
		for _, m := range macs {
			if _, ok := t.macs[m]; ok {
				mac = m
				break
			}
		}
		if mac == "" && len(macs) > 0 {
			mac = macs[0]
		}
		t.mu.Unlock()
		when := e.Time.UTC()
		if e.Time.IsZero() {
			when = t.now()
		}
		ev := BootEvent{Time: when, Stage: stage, IP: cleanIP(e.ClientIP)}
		ev.MAC, ev.Node, ev.Detail = cleanKeys(mac, node, detail)
		if named {
			t.addUnattributed(ev)
			continue
		}
		t.add(ev)
		if ev.Node != "" && e.ClientIP != "" && e.Kind == events.Answer {
			t.mu.Lock()
			t.nodeAt[e.ClientIP] = ev.Node
			if len(t.nodeAt) > timelineMaxKeys {
				clear(t.nodeAt)
				t.nodeAt[e.ClientIP] = ev.Node
			}
			t.mu.Unlock()
		}
	}
}

func ingestStage(e backend.Event) (events.Kind, string) {
	switch e.Kind {
	case events.Answer:
		return events.Answer, joinDetail("answer served", e.Detail)
	case events.Refused:
		what := "answer refused"
		stage := events.Answer
		if strings.Contains(e.Detail, "webhook") {
			what, stage = "webhook refused", events.Webhook
		}
		if e.Status != 0 {
			what += " (" + strconv.Itoa(e.Status) + ")"
		}
		return stage, joinDetail(what, e.Detail)
	case events.FirstBoot:
		what := "first-boot script"
		if e.Status != 0 {
			what += " (" + strconv.Itoa(e.Status) + ")"
		}
		return events.FirstBoot, joinDetail(what, e.Detail)
	case events.Installed:
		return events.Webhook, joinDetail("installed", e.Detail)
	default:
		return events.Kind(cleanDetail(string(e.Kind))), e.Detail
	}
}

func joinDetail(what, detail string) string {
	if detail == "" {
		return what
	}
	return what + ": " + detail
}
