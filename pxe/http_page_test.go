package pxe

import (
	"encoding/json"
	"github.com/google/go-cmp/cmp"
	"path/filepath"
	"regexp"
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

func TestStatusPageAfterAFullBootShowsEveryStepAndNoSecret(t *testing.T) {
	lab := newWindowLab(t)
	lab.netboot(t)
	pw := lab.install(t)

	var rep StatusReport
	if err := json.Unmarshal([]byte(lab.do(t, "GET", lab.base+"/status", "")), &rep); err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, n := range rep.Nodes {
		states[n.Name] = n.State
		if n.Name == "lab1" {
			if diff := cmp.Diff(labSteps, stagesOf(n.Timeline)); diff != "" {
				t.Errorf("lab1's timeline in GET /status (-want +got):\n%s", diff)
			}
		}
	}
	if diff := cmp.Diff(map[string]string{"lab1": "installed", "lab2": "pending", "lab3": "consumed"}, states); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	if l := rep.Window.LeftSeconds; !rep.Window.Open || l == nil || *l <= 0 || *l > int64(lab.ttl/time.Second) {
		t.Errorf("window = %+v, want open with at most %s left", rep.Window, lab.ttl)
	}

	page := lab.do(t, "GET", lab.base+"/", "")
	for path, body := range map[string]string{"/": page, "/status": lab.do(t, "GET", lab.base+"/status", ""), "/timeline": lab.do(t, "GET", lab.base+"/timeline", "")} {
		if strings.Contains(body, pw) {
			t.Errorf("GET %s holds the generated root password", path)
		}
	}
	var order []string
	for _, m := range regexp.MustCompile(`<tr data-stage="([^"]+)">`).FindAllStringSubmatch(sectionOf(t, page, "lab1"), -1) {
		order = append(order, m[1])
	}
	want := make([]string, len(labSteps))
	for i, s := range labSteps {
		want[i] = string(s)
	}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("lab1's rows on the page (-want +got):\n%s", diff)
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
