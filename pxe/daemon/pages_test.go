package daemon_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/netboot"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
	"github.com/plasmactl/plasma-node/pxe/tlscert"
)

// TestTheFullStatusPageIsTheAPIsForAReadToken: the window's own page
// masks a pinned MAC that a refused answer named; the daemon's API
// serves the same page and report in full to a read token (as a bearer
// token, or as a browser sends it, the password of HTTP Basic), refuses
// them without one (asking a browser for it), and says 503 while it
// runs no window.
func TestTheFullStatusPageIsTheAPIsForAReadToken(t *testing.T) {
	const mac = "52:54:00:de:ad:02"
	state := t.TempDir()
	r := start(t, state)
	c := adminClient(t, state, r)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, _ := folder.OpenTokens(state, nil)
	read, err := st.Create(ctx, "reader", apitoken.ScopeRead, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	tlsc, err := tlscert.PinnedTLSConfig(r.d.Fingerprint())
	if err != nil {
		t.Fatal(err)
	}
	api := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsc}, Timeout: 10 * time.Second}
	get := func(cl *http.Client, url string, auth func(*http.Request)) (int, http.Header, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		if auth != nil {
			auth(req)
		}
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	asBearer := func(req *http.Request) { req.Header.Set("Authorization", "Bearer "+read) }
	asBasic := func(req *http.Request) { req.SetBasicAuth("operator", read) }

	if code, _, body := get(api, r.url+"/api/v1/page", asBearer); code != 503 || !strings.Contains(body, "no window serves") {
		t.Errorf("the page with no window: %d %s, want 503", code, body)
	}
	reg := registry.Registration{Name: "pve2", MACs: []string{mac}, BootDisk: answer.BootDisk{Kind: answer.BootDiskAny}}
	if _, err := c.Register(ctx, reg, registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := c.OpenWindow(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	refused := `{"product":{"fullname":"Proxmox Backup Server","product":"pbs"},"iso":{"release":"9.2"},"network_interfaces":[{"link":"e","mac":"` + mac + `"}]}`
	resp, err := http.Post("http://"+w.HTTP+"/answer", "application/json", strings.NewReader(refused))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("POST /answer: %s, want 400", resp.Status)
	}

	if _, _, page := get(http.DefaultClient, "http://"+w.HTTP+"/", nil); strings.Contains(page, mac) || !strings.Contains(page, "…:ad:02") {
		t.Errorf("the window's own page shows %s in full, or not its tail:\n%s", mac, page)
	}
	code, hdr, _ := get(api, r.url+"/api/v1/page", nil)
	if code != 401 || !strings.Contains(strings.Join(hdr.Values("WWW-Authenticate"), "\n"), "Basic realm=") {
		t.Errorf("the page without a token: %d %v, want 401 asking a browser for Basic credentials", code, hdr.Values("WWW-Authenticate"))
	}
	for how, auth := range map[string]func(*http.Request){"bearer": asBearer, "basic": asBasic} {
		code, hdr, page := get(api, r.url+"/api/v1/page", auth)
		if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") || !strings.Contains(page, mac) || !strings.Contains(page, "answer refused (400)") {
			t.Errorf("the full page (%s): %d %s:\n%s", how, code, hdr.Get("Content-Type"), page)
		}
	}
	code, _, body := get(api, r.url+"/api/v1/status", asBearer)
	var rep netboot.StatusReport
	if err := json.Unmarshal([]byte(body), &rep); code != 200 || err != nil || len(rep.Nodes) != 1 || len(rep.Nodes[0].MACs) != 1 || rep.Nodes[0].MACs[0] != mac {
		t.Errorf("the full status: %d %v\n%s", code, err, body)
	}
}
