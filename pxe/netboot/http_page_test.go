package netboot

import (
	"context"

	"github.com/plasmactl/plasma-node/pxe/backend"

	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/store/folder"

	"encoding/json"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// appendEvents reports answer-side events to the handler, as its own
// routes do.
func appendEvents(t *testing.T, e *bootEnv, evs ...backend.Event) {
	t.Helper()
	for _, ev := range evs {
		e.h.record(context.Background(), ev)
	}
}

// writeEvents writes events to the state folder's event log, as an
// earlier window did.
func writeEvents(t *testing.T, state string, evs ...backend.Event) {
	t.Helper()
	l := folder.OpenEvents(folder.EventsPath(state), folder.EventsOptions{})
	defer l.Close()
	for _, e := range evs {
		if err := l.Append(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStatusPageListsNodesWithTimelines(t *testing.T) {
	e := newBootEnv(t, Config{},
		testReg(t, "pve1", "sda", testMAC1), testReg(t, "pve2", "sda", testMAC2), testReg(t, "pve3", "sdb", "52:54:00:77:00:30"))
	e.h.Metrics().SetWindow(true, time.Now().Add(time.Hour))
	e.get(t, "/boot.ipxe?mac="+testMAC1)
	e.consume(t, "pve2", testMAC2)
	e.consume(t, "pve3")
	appendEvents(t, e, backend.Event{Time: time.Date(2026, 1, 2, 4, 0, 0, 0, time.UTC), Kind: events.Installed, Node: "pve3", Status: 200, Detail: "installer reported success"})
	hostile := `<script>alert("x")</script>`
	e.get(t, "/assets/9.1-1/linux26?mac="+testMAC1, "Range", "bytes=0-1,"+hostile)
	e.get(t, "/boot.ipxe?mac=52:54:00:77:00:99")

	code, body, hdr := e.get(t, "/")
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
		t.Fatalf("GET / = %d %s", code, hdr.Get("Content-Type"))
	}
	for _, want := range []string{
		`Window: <strong>open</strong>, <span id="window-left">59m`,
		`<section class="node" id="node-pve1" data-node="pve1" data-state="pending">`,
		`<section class="node" id="node-pve2" data-node="pve2" data-state="consumed">`,
		`<section class="node" id="node-pve3" data-node="pve3" data-state="installed">`,
		`<span data-count="pending">1 pending</span> <span data-count="consumed">1 consumed</span> <span data-count="installed">1 installed</span>`,
		"install release 9.1-1 (matched by mac)",
		"<td>kernel</td>",
		"installed: installer reported success",
		"<h3>…:00:99</h3>",
		"&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;",
		"to ….120",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(body, hostile) {
		t.Errorf("page holds the client's markup unescaped")
	}
}

func TestStatusPageOfAnEmptyClosedWindow(t *testing.T) {
	e := newBootEnv(t, Config{})
	code, body, _ := e.get(t, "/")
	for _, want := range []string{"Window: <strong>closed</strong>", "No registrations."} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("GET / = %d, lacks %q", code, want)
		}
	}
}

func TestTimelineRouteFoldsInTheEventHistoryOnce(t *testing.T) {
	e := newBootEnv(t, Config{}, testReg(t, "pve1", "sda", testMAC1))
	e.get(t, "/boot.ipxe?mac="+testMAC1)
	writeEvents(t, e.state, backend.Event{Kind: events.Answer, Node: "pve1", MAC: testMAC1, ClientIP: "10.77.0.120", Status: 200, Detail: "matched by mac"})
	if err := e.h.LoadHistory(context.Background()); err != nil {
		t.Fatal(err)
	}
	var snap TimelineSnapshot
	for range 2 { // a second read must not add the answer again
		code, body, hdr := e.get(t, "/timeline")
		if code != 200 || hdr.Get("Content-Type") != "application/json" {
			t.Fatalf("GET /timeline = %d %s", code, hdr.Get("Content-Type"))
		}
		if err := json.Unmarshal([]byte(body), &snap); err != nil {
			t.Fatal(err)
		}
	}
	var stages []events.Kind
	for _, ev := range snap.Nodes["pve1"] {
		stages = append(stages, ev.Stage)
	}
	if len(stages) != 2 || stages[0] != events.Script || stages[1] != events.Answer {
		t.Errorf("pve1 stages = %v, want [script answer]", stages)
	}
}

// sectionOf cuts a node's section out of the page.
func sectionOf(t *testing.T, page, node string) string {
	t.Helper()
	start := strings.Index(page, `<section class="node" id="node-`+node+`"`)
	if start < 0 {
		t.Fatalf("the page has no section for %s", node)
	}
	end := strings.Index(page[start:], "</section>")
	return page[start : start+end]
}

// goldenPageEnv renders the page of a fixed state: every clock is
// frozen, so the page is the same on every run.
func goldenPageEnv(t *testing.T) *bootEnv {
	t.Helper()
	e := newBootEnv(t, Config{Timeline: &Timeline{Now: tickClock()}, Metrics: &Metrics{now: func() time.Time { return atSec(0) }}},
		testReg(t, "pve1", "sda", testMAC1), testReg(t, "pve2", "sda", testMAC2), testReg(t, "pve3", "sdb"))
	e.h.cfg.Now = func() time.Time { return atSec(59) }
	e.h.Metrics().SetWindow(true, atSec(0).Add(90*time.Minute+5*time.Second))
	e.h.Net(NetEvent{Kind: events.DHCPOffer, MAC: mustMAC(t, testMAC1), File: "ipxe.efi", Arch: "x86-64 UEFI"})
	e.h.Net(NetEvent{Kind: events.TFTP, File: "ipxe.efi", Peer: netip.MustParseAddrPort("127.0.0.1:1234"), Bytes: 1024})
	e.get(t, "/boot.ipxe?mac="+testMAC1+"&platform=efi")
	e.get(t, "/assets/9.1-1/linux26?mac="+testMAC1)
	e.get(t, "/assets/9.1-1/initrd-netboot.img?mac="+testMAC1, "Range", `bytes=0-1,<script>alert("x")</script>`)
	e.consume(t, "pve2", testMAC2)
	e.consume(t, "pve3")
	appendEvents(t, e,
		backend.Event{Time: atSec(30), Kind: events.Answer, Node: "pve2", MAC: testMAC2, ClientIP: "10.77.0.120", Status: 200, Detail: "matched by mac; installer 9.2"},
		backend.Event{Time: atSec(40), Kind: events.FirstBoot, ClientIP: "10.77.0.120", Status: 200, Detail: "first-boot script served"},
		backend.Event{Time: time.Date(2026, 1, 2, 3, 5, 0, 0, time.UTC), Kind: events.Installed, Node: "pve3", Status: 200, Detail: "installer reported success"},
	)
	e.get(t, "/boot.ipxe?mac=52:54:00:77:00:99")
	return e
}

func mustMAC(t *testing.T, s string) net.HardwareAddr {
	t.Helper()
	m, err := net.ParseMAC(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestStatusPageGolden(t *testing.T) {
	e := goldenPageEnv(t)
	_, body, _ := e.get(t, "/")
	checkGoldenPage(t, "page.html", body)
}

// checkGoldenPage compares a page with its golden file of testdata/http,
// which -update writes.
func checkGoldenPage(t *testing.T, name, body string) {
	t.Helper()
	path := filepath.Join("testdata", "http", name)
	if *update {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), body); diff != "" {
		t.Errorf("page differs from %s (-want +got):\n%s", path, diff)
	}
}

func TestStatusPageLoadsNothingButItsOwnInlineCode(t *testing.T) {
	e := goldenPageEnv(t)
	_, body, hdr := e.get(t, "/")
	csp := hdr.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("Content-Security-Policy = %q, want default-src 'none' and connect-src 'self'", csp)
	}
	// The inline style and script as served must be the ones the policy
	// allows by hash (html/template must not have changed them).
	inline := regexp.MustCompile(`(?s)<(style|script)>(.*?)</(?:style|script)>`).FindAllStringSubmatch(body, -1)
	if len(inline) != 2 {
		t.Fatalf("the page has %d inline style and script elements, want 2", len(inline))
	}
	for _, m := range inline {
		if want := m[1] + "-src " + cspHash(m[2]); !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy lacks %q for the %s served", want, m[1])
		}
	}
	for _, ref := range regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(body, -1) {
		if ref[1] != "data:," {
			t.Errorf("the page refers to %q; it must load nothing", ref[1])
		}
	}
	if !strings.Contains(body, `<noscript><meta http-equiv="refresh" content="5"></noscript>`) {
		t.Error("without JavaScript the page does not refresh itself")
	}
}

func TestStatusPageWindowStates(t *testing.T) {
	for name, tc := range map[string]struct {
		open     bool
		deadline time.Time
		want     string
	}{
		"closed":        {want: `<p id="window" data-open="false">Window: <strong>closed</strong>.</p>`},
		"open, no TTL":  {open: true, want: `<p id="window" data-open="true">Window: <strong>open</strong>, no time limit.</p>`},
		"open, 1h left": {open: true, deadline: atSec(0).Add(time.Hour), want: `<p id="window" data-open="true" data-left="3600" data-deadline="2026-01-02T04:00:00Z">Window: <strong>open</strong>, <span id="window-left">1h0m0s</span> left`},
		"open, past":    {open: true, deadline: atSec(-5), want: `data-left="0"`},
	} {
		t.Run(name, func(t *testing.T) {
			e := newBootEnv(t, Config{Metrics: &Metrics{now: func() time.Time { return atSec(0) }}})
			e.h.Metrics().SetWindow(tc.open, tc.deadline)
			_, body, _ := e.get(t, "/")
			if !strings.Contains(body, tc.want) {
				t.Errorf("page lacks %q:\n%s", tc.want, body)
			}
		})
	}
}

func TestStatusPageStepsMarkRefusals(t *testing.T) {
	tests := map[string]struct {
		ev         BootEvent
		seen, fail bool
	}{
		"install script": {ev: BootEvent{Stage: events.Script, Detail: "install release 9.1-1 (matched by mac)"}, seen: true},
		"exit script":    {ev: BootEvent{Stage: events.Script, Detail: "exit: no pending registration matches MAC x"}, seen: true, fail: true},
		"answer served":  {ev: BootEvent{Stage: events.Answer, Detail: "answer served: matched by mac"}, seen: true},
		"answer refused": {ev: BootEvent{Stage: events.Answer, Detail: "answer refused (404): no pending registration"}, seen: true, fail: true},
		"webhook":        {ev: BootEvent{Stage: events.Webhook, Detail: "installed: installer reported success"}, seen: true},
		"webhook refused": {ev: BootEvent{Stage: events.Webhook, Detail: "webhook refused (404): unknown or already used webhook token"},
			seen: true, fail: true},
		"first boot":        {ev: BootEvent{Stage: events.FirstBoot, Detail: "first-boot script (200): first-boot script served"}, seen: true},
		"first boot reused": {ev: BootEvent{Stage: events.FirstBoot, Detail: "first-boot script (404): unknown or already used token"}, seen: true, fail: true},
		"kernel":            {ev: BootEvent{Stage: events.Kernel, Detail: "9.1-1/linux26: 200, 50 of 50 bytes sent"}, seen: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			for _, st := range steps([]BootEvent{tc.ev}, nil) {
				want := pageStep{Stage: st.Stage, Label: st.Label}
				if st.Stage == tc.ev.Stage {
					want.Seen, want.Failed, want.Detail = tc.seen, tc.fail, tc.ev.Detail
				}
				if diff := cmp.Diff(want, st); diff != "" {
					t.Errorf("step %s (-want +got):\n%s", st.Stage, diff)
				}
			}
		})
	}
}
