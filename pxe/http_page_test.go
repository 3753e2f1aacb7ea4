package pxe

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/answer"
)

func appendEvents(t *testing.T, state string, evs ...answer.Event) {
	t.Helper()
	l, err := answer.OpenEventLog(filepath.Join(state, answer.EventsFileName))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, e := range evs {
		if err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStatusPageListsNodesWithTimelines(t *testing.T) {
	e := newBootEnv(t, BootHandlerConfig{},
		testReg(t, "pve1", "sda", testMAC1), testReg(t, "pve2", "sda", testMAC2), testReg(t, "pve3", "sdb", "52:54:00:77:00:30"))
	e.h.Metrics().SetWindow(true, time.Now().Add(time.Hour))
	e.get(t, "/boot.ipxe?mac="+testMAC1)
	e.consume(t, "pve2", testMAC2)
	e.consume(t, "pve3")
	appendEvents(t, e.state, answer.Event{Time: time.Date(2026, 1, 2, 4, 0, 0, 0, time.UTC), Kind: answer.EventInstalled, Node: "pve3", Status: 200, Detail: "installer reported success"})
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
		"<h3>52:54:00:77:00:99</h3>",
		"&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;",
		"to 10.77.0.120",
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
	e := newBootEnv(t, BootHandlerConfig{})
	code, body, _ := e.get(t, "/")
	for _, want := range []string{"Window: <strong>closed</strong>", "No registrations."} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("GET / = %d, lacks %q", code, want)
		}
	}
}

func TestTimelineRouteFoldsInTheEventLogOnce(t *testing.T) {
	e := newBootEnv(t, BootHandlerConfig{}, testReg(t, "pve1", "sda", testMAC1))
	e.get(t, "/boot.ipxe?mac="+testMAC1)
	appendEvents(t, e.state, answer.Event{Kind: answer.EventAnswer, Node: "pve1", MAC: testMAC1, ClientIP: "10.77.0.120", Status: 200, Detail: "matched by mac"})
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
	var stages []Stage
	for _, ev := range snap.Nodes["pve1"] {
		stages = append(stages, ev.Stage)
	}
	if len(stages) != 2 || stages[0] != StageScript || stages[1] != StageAnswer {
		t.Errorf("pve1 stages = %v, want [script answer]", stages)
	}
}
