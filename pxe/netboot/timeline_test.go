package netboot

import (
	"slices"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/events"

	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// clock returns a Now that ticks one second per call from t0.
func tickClock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

func atSec(sec int) time.Time { return time.Date(2026, 1, 2, 3, 0, sec, 0, time.UTC) }

func TestTimelineLinksMACsToNodes(t *testing.T) {
	tl := &Timeline{Now: tickClock()}
	tl.Record("52-54-00-77-00-10", "", events.DHCPOffer, "offered ipxe.efi")
	tl.Record(testMAC1, "", events.TFTP, "ipxe.efi")
	tl.Record(testMAC1, "pve1", events.Script, "install")
	tl.Record(strings.ToUpper(testMAC1), "", events.Kernel, "linux26")
	tl.Record(testMAC2, "", events.DHCPOffer, "unknown machine")
	tl.Record("", "", events.Asset, "no mac")

	want := []BootEvent{
		{Time: atSec(1), Stage: events.DHCPOffer, MAC: testMAC1, Node: "pve1", Detail: "offered ipxe.efi"},
		{Time: atSec(2), Stage: events.TFTP, MAC: testMAC1, Node: "pve1", Detail: "ipxe.efi"},
		{Time: atSec(3), Stage: events.Script, MAC: testMAC1, Node: "pve1", Detail: "install"},
		{Time: atSec(4), Stage: events.Kernel, MAC: testMAC1, Node: "pve1", Detail: "linux26"},
	}
	if diff := cmp.Diff(want, tl.For("pve1")); diff != "" {
		t.Errorf("For(pve1) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, tl.For(testMAC1)); diff != "" {
		t.Errorf("For(mac) (-want +got):\n%s", diff)
	}
	snap := tl.Snapshot()
	if diff := cmp.Diff([]string{testMAC2}, eventKeys(snap.Unmatched)); diff != "" {
		t.Errorf("unmatched MACs (-want +got):\n%s", diff)
	}
	if len(snap.Other) != 1 || snap.Other[0].Detail != "no mac" {
		t.Errorf("other = %+v, want the event without MAC or node", snap.Other)
	}
	if tl.For("nobody") != nil {
		t.Error("For(unknown node) returned events")
	}
}

func eventKeys(m map[string][]BootEvent) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestTimelineCleansWhatItRecords(t *testing.T) {
	tests := map[string]struct {
		mac, node, detail string
		want              BootEvent
	}{
		"control characters become spaces": {testMAC1, "pve1", "a\nb\x00c\x1b[31m", BootEvent{MAC: testMAC1, Node: "pve1", Detail: "a b c [31m"}},
		"a bad MAC moves into the detail":  {"zz:zz", "", "x", BootEvent{Detail: `unparsable MAC "zz:zz"; x`}},
		"a bad name moves into the detail": {"", "../x", "y", BootEvent{Detail: `invalid node name "../x"; y`}},
		"a long detail is cut":             {"", "n", strings.Repeat("é", 200), BootEvent{Node: "n", Detail: strings.Repeat("é", maxDetailLen/2)}},
		"invalid UTF-8 becomes spaces":     {"", "n", "a\xffb", BootEvent{Node: "n", Detail: "a b"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tl := &Timeline{Now: func() time.Time { return atSec(0) }}
			tl.Record(tc.mac, tc.node, events.Script, tc.detail)
			var got []BootEvent
			snap := tl.Snapshot()
			for _, m := range [][]BootEvent{snap.Nodes[tc.want.Node], snap.Other} {
				got = append(got, m...)
			}
			if tc.want.Node == "" && tc.want.MAC != "" {
				got = tl.For(tc.want.MAC)
			}
			tc.want.Time, tc.want.Stage = atSec(0), events.Script
			if diff := cmp.Diff([]BootEvent{tc.want}, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTimelineIsBounded(t *testing.T) {
	tl := &Timeline{Limit: 3, Now: tickClock()}
	for i := range 5 {
		tl.Record(testMAC1, "pve1", events.Script, fmt.Sprint(i))
	}
	var got []string
	for _, ev := range tl.For("pve1") {
		got = append(got, ev.Detail)
	}
	if diff := cmp.Diff([]string{"2", "3", "4"}, got); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	tl = &Timeline{Now: tickClock()}
	for i := range timelineMaxKeys + 10 {
		tl.Record(fmt.Sprintf("02:00:00:00:%02x:%02x", i/256, i%256), "", events.DHCPOffer, "")
	}
	snap := tl.Snapshot()
	if n := len(snap.Unmatched); n != timelineMaxKeys {
		t.Errorf("MACs kept = %d, want %d", n, timelineMaxKeys)
	}
	if _, ok := snap.Unmatched["02:00:00:00:00:00"]; ok {
		t.Error("the oldest MAC was kept")
	}
	if _, ok := snap.Unmatched[fmt.Sprintf("02:00:00:00:%02x:%02x", (timelineMaxKeys+9)/256, (timelineMaxKeys+9)%256)]; !ok {
		t.Error("the newest MAC was forgotten")
	}
}

func TestTimelineIngestsAnswerEvents(t *testing.T) {
	tl := &Timeline{Now: tickClock()}
	tl.Record(testMAC2, "pve1", events.Script, "install") // atSec(1)
	tl.Ingest(
		backend.Event{Time: atSec(10), Kind: events.Answer, Node: "pve1", MAC: testMAC1 + "," + testMAC2, ClientIP: "10.77.0.120", Status: 200, Detail: "matched by mac; installer 9.1"},
		backend.Event{Time: atSec(5), Kind: events.Refused, MAC: "52:54:00:77:00:99", ClientIP: "10.77.0.121", Status: 404, Detail: "no pending registration matches this machine"},
		backend.Event{Time: atSec(20), Kind: events.FirstBoot, ClientIP: "10.77.0.120", Status: 200, Detail: "first-boot script served"},
		backend.Event{Time: atSec(30), Kind: events.Installed, Node: "pve1", ClientIP: "10.77.0.120", Status: 200, Detail: "installer reported success"},
		backend.Event{Time: atSec(31), Kind: events.Refused, ClientIP: "10.77.0.9", Status: 404, Detail: "unknown or already used webhook token"},
	)
	want := []BootEvent{
		{Time: atSec(1), Stage: events.Script, MAC: testMAC2, Node: "pve1", Detail: "install"},
		{Time: atSec(10), Stage: events.Answer, MAC: testMAC2, Node: "pve1", IP: "10.77.0.120", Detail: "answer served: matched by mac; installer 9.1 (from 10.77.0.120)"},
		// The answer linked 10.77.0.120 to the MAC too.
		{Time: atSec(20), Stage: events.FirstBoot, MAC: testMAC2, Node: "pve1", IP: "10.77.0.120", Detail: "first-boot script (200): first-boot script served (from 10.77.0.120)"},
		{Time: atSec(30), Stage: events.Webhook, MAC: testMAC2, Node: "pve1", IP: "10.77.0.120", Detail: "installed: installer reported success (from 10.77.0.120)"},
	}
	if diff := cmp.Diff(want, tl.For("pve1")); diff != "" {
		t.Errorf("pve1 (-want +got):\n%s", diff)
	}
	refused := tl.For("52:54:00:77:00:99")
	if len(refused) != 1 || refused[0].Stage != events.Answer || !strings.HasPrefix(refused[0].Detail, "answer refused (404): no pending") {
		t.Errorf("unknown machine = %+v, want its refused answer", refused)
	}
	other := tl.Snapshot().Other
	if len(other) != 1 || other[0].Stage != events.Webhook || !strings.HasPrefix(other[0].Detail, "webhook refused (404)") {
		t.Errorf("other = %+v, want the refused webhook", other)
	}
}

func TestTimelineLinksClientIPsToMACs(t *testing.T) {
	tl := &Timeline{Now: tickClock()}
	tl.Record(testMAC1, "", events.DHCPOffer, "offer")                              // atSec(1)
	tl.RecordFrom("10.77.0.120", "", "", events.TFTP, "ipxe.efi")                   // atSec(2): no MAC yet
	tl.RecordFrom("10.77.0.121", "", "", events.TFTP, "another machine")            // atSec(3)
	tl.RecordFrom("::ffff:10.77.0.120", testMAC1, "pve1", events.Script, "install") // atSec(4): links both
	tl.RecordFrom("10.77.0.120", "", "", events.Kernel, "linux26")                  // atSec(5): named by the IP
	tl.RecordFrom("0.0.0.0", "", "", events.TFTP, "unspecified")                    // atSec(6)
	want := []BootEvent{
		{Time: atSec(1), Stage: events.DHCPOffer, MAC: testMAC1, Node: "pve1", Detail: "offer"},
		{Time: atSec(2), Stage: events.TFTP, MAC: testMAC1, Node: "pve1", IP: "10.77.0.120", Detail: "ipxe.efi"},
		{Time: atSec(4), Stage: events.Script, MAC: testMAC1, Node: "pve1", IP: "10.77.0.120", Detail: "install"},
		{Time: atSec(5), Stage: events.Kernel, MAC: testMAC1, Node: "pve1", IP: "10.77.0.120", Detail: "linux26"},
	}
	if diff := cmp.Diff(want, tl.For("pve1")); diff != "" {
		t.Errorf("pve1 (-want +got):\n%s", diff)
	}
	other := tl.Snapshot().Other
	if len(other) != 2 || other[0].IP != "10.77.0.121" || other[1].IP != "" {
		t.Errorf("other = %+v, want the other machine's download and the one from no address", other)
	}
}

func TestNilTimelineAndMetricsDoNothing(t *testing.T) {
	var tl *Timeline
	tl.Record(testMAC1, "pve1", events.Script, "x")
	tl.Ingest(backend.Event{Kind: events.Answer, Node: "pve1"})
	if tl.For("pve1") != nil || len(tl.Snapshot().Nodes) != 0 {
		t.Error("a nil timeline returned events")
	}
	var m *Metrics
	m.dhcpOffer()
	m.DHCPIgnored()
	m.tftpTransfer(5)
	m.tftpRefused()
	m.scriptServed(true)
	m.assetSent(1)
	m.answerServed()
	m.answerRefused()
	m.SetWindow(true, time.Now())
	if open, _, _ := m.Window(); open {
		t.Error("a nil Metrics reports an open window")
	}
}

func TestTimelineIsSafeForConcurrentUse(t *testing.T) {
	tl := &Timeline{Limit: 10}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 200 {
				tl.Record(fmt.Sprintf("02:00:00:00:00:%02x", j%16), fmt.Sprintf("n%d", i), events.Script, "x")
				tl.Snapshot()
				tl.For("n1")
			}
		})
	}
	wg.Wait()
	if n := len(tl.For("n1")); n != 10 {
		t.Errorf("n1 holds %d events, want the limit 10", n)
	}
}

// TestMalformedRequestsStayUnattributed: a 400 or 405 that names no MAC is
// not filed under the node that last used the client's address (before,
// the address's node got it, and its answer step turned red).
func TestMalformedRequestsStayUnattributed(t *testing.T) {
	at := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	now := at.Add(-time.Second)
	tl := &Timeline{Now: func() time.Time { return now }}
	tl.RecordFrom("10.0.0.5", "52:54:00:00:00:01", "n1", events.Script, "install n1")
	tl.Ingest(
		backend.Event{Time: at, Kind: events.Answer, Node: "n1", MAC: "52:54:00:00:00:01", ClientIP: "10.0.0.5", Status: 200},
		backend.Event{Time: at.Add(time.Second), Kind: events.Refused, ClientIP: "10.0.0.5", Status: 400, Detail: "invalid system-info JSON"},
		backend.Event{Time: at.Add(2 * time.Second), Kind: events.Refused, ClientIP: "10.0.0.5", Status: 405, Detail: "GET not allowed"},
		backend.Event{Time: at.Add(3 * time.Second), Kind: events.FirstBoot, ClientIP: "10.0.0.5", Status: 404, Detail: "unknown or already served first-boot token"},
	)
	// Linking the address again later does not pull them in either.
	now = at.Add(4 * time.Second)
	tl.RecordFrom("10.0.0.5", "52:54:00:00:00:01", "", events.Script, "exit: installed")
	s := tl.Snapshot()
	var other []int
	for _, e := range s.Other {
		if e.MAC != "" || e.Node != "" {
			t.Errorf("an unattributed event names %s %s", e.MAC, e.Node)
		}
		other = append(other, e.Time.Second())
	}
	if diff := cmp.Diff([]int{1, 2}, other); diff != "" {
		t.Errorf("unattributed events by second (-want +got):\n%s", diff)
	}
	var stages []events.Kind
	for _, e := range s.Nodes["n1"] {
		stages = append(stages, e.Stage)
	}
	if diff := cmp.Diff([]events.Kind{events.Script, events.Answer, events.FirstBoot, events.Script}, stages); diff != "" {
		t.Errorf("n1's stages (-want +got):\n%s", diff)
	}
	// Once installed, the replay does not fail the first-boot step.
	installed := at.Add(2500 * time.Millisecond)
	ok200 := BootEvent{Time: at.Add(time.Second / 2), Stage: events.FirstBoot, Node: "n1", Detail: "first-boot script (200): served"}
	evs := append([]BootEvent{ok200}, s.Nodes["n1"]...)
	for _, st := range steps(evs, &installed) {
		if st.Failed {
			t.Errorf("step %s failed after the installation: %s", st.Stage, st.Detail)
		}
	}
	if st := steps(evs, nil); !st[6].Failed || st[6].Stage != events.FirstBoot {
		t.Errorf("without an installation the 404 is the first-boot step's state: %+v", st[6])
	}
}

// TestARefusalNamingAnotherMachineIsNotFiledUnderTheNode: a refused
// answer request from a node's address that names another machine's MAC
// is that machine's event, not the node's: the node's answer step stays
// green.
func TestARefusalNamingAnotherMachineIsNotFiledUnderTheNode(t *testing.T) {
	tl := &Timeline{Now: tickClock()}
	tl.RecordFrom("10.77.0.120", testMAC1, "pve1", events.Script, "install")
	tl.Ingest(
		backend.Event{Time: atSec(10), Kind: events.Answer, Node: "pve1", MAC: testMAC1, ClientIP: "10.77.0.120", Status: 200, Detail: "matched by mac"},
		backend.Event{Time: atSec(11), Kind: events.Refused, MAC: "52:54:00:77:00:99", ClientIP: "10.77.0.120", Status: 404, Detail: "no pending registration matches this machine"},
	)
	for _, e := range tl.For("pve1") {
		if strings.Contains(e.Detail, "refused") {
			t.Errorf("pve1's timeline holds the other machine's refusal: %+v", e)
		}
	}
	if got := tl.For("52:54:00:77:00:99"); len(got) != 1 || !strings.Contains(got[0].Detail, "answer refused (404)") {
		t.Errorf("the other machine's events = %+v, want its refusal", got)
	}
}

// stormMACs returns n distinct canonical MAC addresses.
func stormMACs(n int) []string {
	macs := make([]string, n)
	for i := range macs {
		macs[i] = fmt.Sprintf("02:00:00:%02x:%02x:%02x", i>>16&0xff, i>>8&0xff, i&0xff)
	}
	return macs
}

// timelineStormAllocBudget is what recording the offer of a MAC address
// the full timeline has never seen (a storm's DISCOVER, which forgets the
// quietest of its timelineMaxKeys MACs) may allocate, amortised: the
// forgotten MAC's item and events are reused. A committed budget, as
// offerAllocBudget is in the DHCP server.
const timelineStormAllocBudget = 0.1

// TestTimelineStormOfNewMACsAllocBudget records offers of new MACs past
// timelineMaxKeys: each evicts the quietest in O(1), reusing its memory,
// and the timeline stays at its bound with the newest MACs.
func TestTimelineStormOfNewMACsAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own: allocation budgets are checked without it")
	}
	macs := stormMACs(8 * timelineMaxKeys)
	tl := &Timeline{Now: tickClock()}
	i := 0
	for ; i < 2*timelineMaxKeys; i++ {
		tl.Record(macs[i], "", events.DHCPOffer, "x86-64 UEFI")
	}
	n := testing.AllocsPerRun(4*timelineMaxKeys, func() {
		tl.Record(macs[i%len(macs)], "", events.DHCPOffer, "x86-64 UEFI")
		i++
	})
	if n > timelineStormAllocBudget {
		t.Errorf("recording a new MAC's offer allocates %v times, budget %v", n, timelineStormAllocBudget)
	}
	snap := tl.Snapshot()
	if len(snap.Unmatched) != timelineMaxKeys {
		t.Errorf("MACs kept = %d, want %d", len(snap.Unmatched), timelineMaxKeys)
	}
	if _, ok := snap.Unmatched[macs[(i-1)%len(macs)]]; !ok {
		t.Error("the newest MAC was forgotten")
	}
	if _, ok := snap.Unmatched[macs[(i-timelineMaxKeys-1)%len(macs)]]; ok {
		t.Error("a MAC older than the newest timelineMaxKeys was kept")
	}
	t.Logf("recording a new MAC's offer allocates %v times (budget %v)", n, timelineStormAllocBudget)
}

// BenchmarkTimelineStormOfNewMACs records offers of MACs the full
// timeline has never seen, as a DHCP storm does.
func BenchmarkTimelineStormOfNewMACs(b *testing.B) {
	macs := stormMACs(8 * timelineMaxKeys)
	tl := &Timeline{}
	for i := range 2 * timelineMaxKeys {
		tl.Record(macs[i], "", events.DHCPOffer, "x86-64 UEFI")
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		tl.Record(macs[i%len(macs)], "", events.DHCPOffer, "x86-64 UEFI")
		i++
	}
}

// Record is RecordFrom for an event from no known address.
func (t *Timeline) Record(mac, node string, stage events.Kind, detail string) {
	t.RecordFrom("", mac, node, stage, detail)
}

// For returns a copy of the events of a MAC address (any form
// [normalizeMAC] accepts) or, if key is not a MAC, of the node of
// that name, oldest first. It returns nil when there are none.
func (t *Timeline) For(key string) []BootEvent {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if m, err := normalizeMAC(key); err == nil {
		return slices.Clone(t.macs[m])
	}
	return slices.Clone(t.nodes[key])
}
