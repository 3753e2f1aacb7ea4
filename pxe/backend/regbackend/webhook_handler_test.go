package regbackend_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/netboot"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// webhookBody is testdata/webhook's 9.2 body without its "token" (the
// answer's auth-token, new for each answer: TestWebhookChecksTheToken
// sends it), edited by edit.
func webhookBody(t *testing.T, edit func(m map[string]any)) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "answer", "testdata", "webhook", "pve-9.2-synthetic.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "token")
	if edit != nil {
		edit(m)
	}
	out, _ := json.Marshal(m)
	return out
}

// answeredWebhook answers pve1 and returns its webhook URL.
func answeredWebhook(t *testing.T, e *handlerEnv) string {
	t.Helper()
	return answeredHook(t, e).URL
}

// answeredHook answers pve1 for 9.2 and returns its webhook section.
func answeredHook(t *testing.T, e *handlerEnv) *answer.Webhook {
	t.Helper()
	status, got, _ := e.post(t, "", "application/json", sysinfo(t, "pve-9.2-synthetic.json"))
	if status != 200 {
		t.Fatalf("answer: %d %s", status, got)
	}
	a, err := answer.Decode([]byte(got), answer.Version92)
	if err != nil || a.PostInstallationWebhook == nil {
		t.Fatalf("answer without a webhook: %v\n%s", err, got)
	}
	return a.PostInstallationWebhook
}

func postHook(t *testing.T, url string, body io.Reader) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json; charset=utf-8", body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// TestWebhookKeepsTheReport: the real handler parses the installer's
// body and keeps it with the consumed registration: address with
// prefix, MACs, host keys, boot mode, Secure Boot, versions, boot disk,
// machine-id.
func TestWebhookKeepsTheReport(t *testing.T) {
	e := newHandlerEnv(t, mustReg(t, "pve1", []string{"52:54:00:ba:5e:11"}, "25414A800205"))
	hook := answeredWebhook(t, e)
	if status, msg := postHook(t, hook, bytes.NewReader(webhookBody(t, nil))); status != 200 {
		t.Fatalf("webhook: %d %s", status, msg)
	}
	in, err := e.inst.Get(context.Background(), "pve1")
	if err != nil {
		t.Fatal(err)
	}
	r := in.Report
	if in.ClientIP != "127.0.0.1" || r.Management == nil || r.Management.Address.String() != "192.0.2.41/24" || r.Management.MAC != "52:54:00:ba:5e:11" ||
		len(r.MACs) != 2 || len(r.HostKeys) != 3 || r.BootMode != "efi" || !r.SecureBoot || r.ProductVersion != "9.2.0" ||
		r.Kernel != "6.17.2-1-pve" || len(r.BootDisks) != 1 || r.BootDisks[0].Serial != "25414A800205" || r.MachineID != "4f3c2b1a09f8e7d6c5b4a39281706f5e" {
		t.Errorf("kept %+v", in)
	}
}

// TestWebhookRefusesHostileBodies: a 10 MB body, 10 000 interfaces and
// an invalid host key are refused by the real handler, and nothing is
// consumed or kept: the token still takes the real report afterwards. A
// replay (a second post of the spent webhook) is refused and changes
// nothing either.
func TestWebhookRefusesHostileBodies(t *testing.T) {
	e := newHandlerEnv(t, mustReg(t, "pve1", []string{"52:54:00:ba:5e:11"}, "25414A800205"))
	hook := answeredWebhook(t, e)
	many := func(m map[string]any) {
		var ifs []any
		for i := range 10000 {
			ifs = append(ifs, map[string]any{"name": fmt.Sprint("e", i), "mac": fmt.Sprintf("02:00:00:00:%02x:%02x", i>>8&0xff, i&0xff)})
		}
		m["network-interfaces"] = ifs
	}
	badKey := func(m map[string]any) {
		m["ssh-public-host-keys"].(map[string]any)["ed25519"] = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMkZ root@pve1"
	}
	huge := append([]byte(`{"fqdn":"`), bytes.Repeat([]byte("a"), 10<<20)...)
	tests := []struct {
		name   string
		body   []byte
		status int
		has    string
	}{
		{"a 10 MB body", append(huge, `"}`...), http.StatusRequestEntityTooLarge, "over 1048576 bytes"},
		{"10 000 interfaces", webhookBody(t, many), http.StatusBadRequest, "10000 network interfaces, at most 64"},
		{"an invalid host key", webhookBody(t, badKey), http.StatusBadRequest, "ssh-public-host-keys.ed25519: invalid SSH host key"},
	}
	for _, tc := range tests {
		status, msg := postHook(t, hook, bytes.NewReader(tc.body))
		if status != tc.status || !strings.Contains(msg, tc.has) {
			t.Errorf("%s: %d %q; want %d saying %q", tc.name, status, msg, tc.status, tc.has)
		}
		if _, err := e.inst.Get(context.Background(), "pve1"); !errors.Is(err, registry.ErrNoInstall) {
			t.Errorf("%s: a report was kept: %v", tc.name, err)
		}
		if nodes, _ := e.b.Nodes(context.Background()); len(nodes) != 1 || nodes[0].State == "installed" {
			t.Errorf("%s: node marked installed: %+v", tc.name, nodes)
		}
	}
	if status, msg := postHook(t, hook, bytes.NewReader(webhookBody(t, nil))); status != 200 {
		t.Fatalf("the real webhook after the refusals: %d %s; want the token unspent", status, msg)
	}
	kept, err := e.inst.Get(context.Background(), "pve1")
	if err != nil {
		t.Fatal(err)
	}
	replay := webhookBody(t, func(m map[string]any) {
		m["network-interfaces"].([]any)[0].(map[string]any)["address"] = "203.0.113.66/24"
		delete(m, "ssh-public-host-keys")
	})
	if status, msg := postHook(t, hook, bytes.NewReader(replay)); status != http.StatusNotFound {
		t.Errorf("replayed webhook: %d %s; want 404", status, msg)
	}
	after, err := e.inst.Get(context.Background(), "pve1")
	if err != nil || after.Report.Management.Address != kept.Report.Management.Address || len(after.Report.HostKeys) != 3 || !after.Reported.Equal(kept.Reported) {
		t.Errorf("the replay changed the report: %+v, %v", after, err)
	}
	evs, _ := e.b.History(context.Background())
	refused := 0
	for _, ev := range evs {
		if ev.Kind == events.Refused && strings.Contains(ev.Detail, "webhook") {
			refused++
		}
	}
	if refused != 4 {
		t.Errorf("%d refused webhook events; want 4 (three bodies and the replay)", refused)
	}
}

// TestStatusShowsTheInstallReport: once installed, a node's status (list
// -o json, the API, the page) carries the reported address with its
// prefix, the report, and its host keys' fingerprints as ssh-keygen -l
// prints them.
func TestStatusShowsTheInstallReport(t *testing.T) {
	e := newHandlerEnv(t, mustReg(t, "pve1", []string{"52:54:00:ba:5e:11"}, "25414A800205"))
	hook := answeredWebhook(t, e)
	if status, msg := postHook(t, hook, bytes.NewReader(webhookBody(t, nil))); status != 200 {
		t.Fatalf("webhook: %d %s", status, msg)
	}
	for name, nodes := range map[string]func() ([]backend.Node, error){
		"Status": func() ([]backend.Node, error) {
			return regbackend.Status(context.Background(), e.reg, folder.OpenEvents(folder.EventsPath(e.state), folder.EventsOptions{}), e.inst)
		},
		"Backend.Nodes": func() ([]backend.Node, error) { return e.b.Nodes(context.Background()) },
	} {
		st, err := nodes()
		if err != nil || len(st) != 1 {
			t.Fatalf("%s: %+v, %v", name, st, err)
		}
		n := st[0]
		want := []string{"SHA256:4D27bvzYLJ3EVO25HEFvpoJ1Mums4LxBPaiAL2usvIw", "SHA256:Fa94RwW/dF1vJz8ppwnU+F8I7IFSWRCGcpmh1D+mioQ", "SHA256:bc5/XRtdwepUs1scqSF6DxJKIX+DJj82wF6C05yZzBE"}
		if n.State != backend.StateInstalled || n.Address != "192.0.2.41/24" || n.Install == nil || n.Install.Kernel != "6.17.2-1-pve" {
			t.Errorf("%s: %+v", name, n)
		}
		if diff := cmp.Diff(want, n.HostKeyFingerprints); diff != "" {
			t.Errorf("%s: fingerprints (-ssh-keygen +got):\n%s", name, diff)
		}
	}
}

// slowBody sends body a byte at a time, every gap.
func slowBody(body []byte, gap time.Duration) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		for i := range body {
			if _, err := pw.Write(body[i : i+1]); err != nil {
				return
			}
			time.Sleep(gap)
		}
		pw.Close()
	}()
	return pr
}

// TestWebhookRefusesASlowBody: a body still arriving after the window's
// webhook read timeout gets 408, and the token stays unspent.
func TestWebhookRefusesASlowBody(t *testing.T) {
	e := newHandlerEnv(t, mustReg(t, "pve1", []string{"52:54:00:ba:5e:11"}, "25414A800205"))
	hook := answeredWebhook(t, e)
	h, err := netboot.New(netboot.Config{Backend: e.b, BaseURL: "http://192.0.2.1:8090", WebhookReadTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	slow := httptest.NewServer(h)
	defer slow.Close()
	u, _ := url.Parse(hook)
	start := time.Now()
	status, msg := postHook(t, slow.URL+u.Path, slowBody([]byte(`{"fqdn":"pve1.lab.example","machine-id":"unknown"}`), 50*time.Millisecond))
	if status != http.StatusRequestTimeout || !strings.Contains(msg, "not sent within 300ms") || time.Since(start) > 5*time.Second {
		t.Errorf("slow body: %d %q after %s; want 408 soon after 300ms", status, msg, time.Since(start))
	}
	if _, err := e.inst.Get(context.Background(), "pve1"); !errors.Is(err, registry.ErrNoInstall) {
		t.Errorf("a report was kept: %v", err)
	}
	if status, msg := postHook(t, hook, bytes.NewReader(webhookBody(t, nil))); status != 200 {
		t.Errorf("the real webhook after the slow one: %d %s; want the token unspent", status, msg)
	}
}

// failingInstalls is a store of reports that cannot keep any.
type failingInstalls struct{ registry.Installs }

func (failingInstalls) Put(context.Context, registry.Install) error {
	return errors.New("disk full")
}

// TestAWebhookWhoseReportCannotBeKeptCanBeRetried: when the report cannot
// be kept the installer gets 500 and the token is put back, so that its
// retry (here through a window whose store works) is taken.
func TestAWebhookWhoseReportCannotBeKeptCanBeRetried(t *testing.T) {
	e := newHandlerEnv(t, mustReg(t, "pve1", []string{"52:54:00:ba:5e:11"}, "25414A800205"))
	hook := answeredWebhook(t, e)
	sec, err := folder.OpenSecrets(e.secrets)
	if err != nil {
		t.Fatal(err)
	}
	broken, err := regbackend.New(regbackend.Config{Store: e.reg, Secrets: sec, StateDir: e.state,
		Events: folder.OpenEvents(folder.EventsPath(e.state), folder.EventsOptions{}), Installs: failingInstalls{e.inst}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := netboot.New(netboot.Config{Backend: broken, BaseURL: "http://192.0.2.1:8090"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	u, _ := url.Parse(hook)
	if status, msg := postHook(t, srv.URL+u.Path, bytes.NewReader(webhookBody(t, nil))); status != http.StatusInternalServerError || strings.Contains(msg, "disk full") {
		t.Errorf("webhook with a failing store: %d %q; want 500 without the cause", status, msg)
	}
	if status, msg := postHook(t, hook, bytes.NewReader(webhookBody(t, nil))); status != 200 {
		t.Fatalf("the retry: %d %s; want the token put back", status, msg)
	}
	if in, err := e.inst.Get(context.Background(), "pve1"); err != nil || in.Report.Management == nil {
		t.Errorf("after the retry: %+v, %v", in, err)
	}
}
