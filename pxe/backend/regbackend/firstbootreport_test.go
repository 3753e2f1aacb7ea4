package regbackend_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/netboot"
)

var reportURLRE = regexp.MustCompile(`(?m)^REPORT_URL='([^']+)'$`)

// TestTheFirstBootHooksReportLandsOnTheTimeline: the first-boot script
// of an answer names a report URL of the window; what the hook posts
// there becomes a first-boot-report event of the node, in the event log,
// once. A body the window does not read is refused with 400 and spends
// nothing; a second report, or a guessed token, gets 404.
func TestTheFirstBootHooksReportLandsOnTheTimeline(t *testing.T) {
	e := newHandlerEnv(t, mustReg(t, "pve1", []string{"52:54:00:ba:5e:11"}, "25414A800205", "tank=single:WD-1"))
	status, got, _ := e.post(t, "", "application/json", sysinfo(t, "pve-9.2-synthetic.json"))
	if status != 200 {
		t.Fatalf("answer: %d %s", status, got)
	}
	a, err := answer.Decode([]byte(got), answer.Version92)
	if err != nil || a.FirstBoot == nil {
		t.Fatalf("answer without a first-boot script: %v", err)
	}
	resp, err := http.Get(a.FirstBoot.URL)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	script := string(raw)
	m := reportURLRE.FindStringSubmatch(script)
	if m == nil || !strings.HasPrefix(m[1], e.srv.URL+"/first-boot-report/") {
		t.Fatalf("the first-boot script names no report URL of the window:\n%s", script)
	}
	url := m[1]
	steps := []struct {
		name, body string
		want       int
	}{
		{"a body that is not a report is refused", "rm -rf /\n", 400},
		{"a guessed token is refused", "pool tank imported\n", 404},
		{"the hook's report is taken", "pool tank imported\n", 200},
		{"a second report is refused", "pool tank created\n", 404},
	}
	for _, s := range steps {
		u := url
		if strings.Contains(s.name, "guessed") {
			u = e.srv.URL + "/first-boot-report/" + strings.Repeat("A", 32)
		}
		if status, msg := postHook(t, u, strings.NewReader(s.body)); status != s.want {
			t.Errorf("%s: %d %s, want %d", s.name, status, msg, s.want)
		}
	}
	if status, _ := postHook(t, url, strings.NewReader("")); status != 404 {
		t.Errorf("a report after the report: %d, want 404", status)
	}
	evs, err := e.b.History(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	type ev struct {
		Node   string
		Status int
		Detail string
	}
	var reports []ev
	for _, x := range evs {
		if x.Kind == events.FirstBootReport {
			reports = append(reports, ev{x.Node, x.Status, x.Detail})
		}
	}
	want := []ev{
		{"pve1", 400, `first-boot report refused: invalid first-boot report: line 1 is not "pool NAME OUTCOME"`},
		{"", 404, "first-boot report refused: unknown or already used first-boot report token"},
		{"pve1", 200, "pool tank found and imported, its data kept"},
		{"", 404, "first-boot report refused: unknown or already used first-boot report token"},
		{"", 404, "first-boot report refused: unknown or already used first-boot report token"},
	}
	if diff := cmp.Diff(want, reports); diff != "" {
		t.Errorf("first-boot-report events (-want +got):\n%s", diff)
	}
}

// TestTheFirstBootScriptPinsTheWindow: an answer served over HTTPS
// gives a first-boot script whose report goes to the window only: it
// carries the window's public key pin (curl --pinnedpubkey).
func TestTheFirstBootScriptPinsTheWindow(t *testing.T) {
	e := newHandlerEnv(t, mustReg(t, "pve1", []string{"52:54:00:ba:5e:11"}, "25414A800205", "tank=single:WD-1"))
	const pin = "sha256//cGxhc21hLW5vZGUgd2luZG93IGtleSBwaW4gdGVzdCE="
	h, err := netboot.New(netboot.Config{Backend: e.b, BaseURL: "http://192.0.2.1:8090", CertFingerprint: strings.Repeat("AB:", 31) + "AB", CertPin: pin})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(h)
	defer srv.Close()
	resp, err := srv.Client().Post(srv.URL+"/answer", "application/json", bytes.NewReader(sysinfo(t, "pve-9.2-synthetic.json")))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	a, err := answer.Decode(got, answer.Version92)
	if err != nil || a.FirstBoot == nil {
		t.Fatalf("answer without a first-boot script: %v\n%d %s\n%s", err, resp.StatusCode, got, e.logs.String())
	}
	resp, err = srv.Client().Get(a.FirstBoot.URL)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if m := reportURLRE.FindStringSubmatch(string(raw)); m == nil || !strings.HasPrefix(m[1], srv.URL+"/first-boot-report/") ||
		!strings.Contains(string(raw), "\nREPORT_PIN='"+pin+"'\n") {
		t.Errorf("the first-boot script does not post to %s with the pin %s:\n%s", srv.URL, pin, raw)
	}
}
