package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestDiscoveryRefusesHostilePosts posts to node-provisioner serve
// --discover's POST /discovery: without the window's token and with
// another one (401), and a flood of 5 000 reports of fake MACs with the
// token the window's boot script hands strangers. The inbox keeps its
// bound of 256 and refuses the rest (503); nothing is kept from a post
// without the token, and each refusal is a refused event. It runs over
// IPv4 and IPv6.
func TestDiscoveryRefusesHostilePosts(t *testing.T) {
	t.Parallel() // its own folders; serve on free loopback ports
	for _, listen := range loopbacks {
		t.Run(listen, func(t *testing.T) { discoveryRefusesHostilePosts(t, listen) })
	}
}

func discoveryRefusesHostilePosts(t *testing.T, listen string) {
	e := newProvisionerEnv(t)
	e.run(t, "register", "pve8", "--mac", "52:54:00:ba:5e:18", "--boot-disk", "any")
	rel := filepath.Join(e.state, "assets", "9.2-1")
	os.MkdirAll(rel, 0o755)
	for _, f := range []string{"linux26", "initrd-netboot.img", "discovery.img"} {
		if err := os.WriteFile(filepath.Join(rel, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	url, _ := e.serve(t, "--discover", "--http", listen)
	base := strings.TrimSuffix(url, "/answer")
	client := &http.Client{Timeout: 30 * time.Second}
	post := func(token, body string) int {
		req, _ := http.NewRequest(http.MethodPost, base+"/discovery", strings.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Error(err)
			return 0
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	report := func(i int) string {
		return fmt.Sprintf(`{"nics":[{"mac":"02:00:00:%02x:%02x:%02x"}],"dmi":{"serial":"FAKE-%d"},"disks":[{"name":"sda","size_bytes":1,"serial":"D-%d"}]}`, i>>16&0xff, i>>8&0xff, i&0xff, i, i)
	}
	for name, token := range map[string]string{"no token": "", "another token": strings.Repeat("A", 43)} {
		if got := post(token, report(1)); got != http.StatusUnauthorized {
			t.Errorf("a post with %s: %d, want 401", name, got)
		}
	}
	if out := e.run(t, "discovered", "-o", "json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("refused posts were kept: %s", out)
	}
	resp, err := client.Get(base + "/boot.ipxe?mac=52:54:00:99:00:01&platform=efi")
	if err != nil {
		t.Fatal(err)
	}
	script, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	_, rest, ok := strings.Cut(string(script), "plasma.discover.token=")
	if !ok {
		t.Fatalf("a stranger's script carries no token:\n%s", script)
	}
	token, _, _ := strings.Cut(rest, " ")

	const flood, bound = 5000, 256
	start := time.Now()
	statuses := map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range flood {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			s := post(token, report(i))
			mu.Lock()
			statuses[s]++
			mu.Unlock()
		})
	}
	wg.Wait()
	t.Logf("a flood of %d fake MACs took %s: %v", flood, time.Since(start).Round(time.Millisecond), statuses)
	if statuses[200] != bound || statuses[503] != flood-bound {
		t.Errorf("flood statuses %v, want %d × 200 and %d × 503", statuses, bound, flood-bound)
	}
	var recs []json.RawMessage
	if err := json.Unmarshal([]byte(e.run(t, "discovered", "-o", "json")), &recs); err != nil || len(recs) != bound {
		t.Errorf("the inbox holds %d after the flood (%v), want %d", len(recs), err, bound)
	}
	ev, _ := os.ReadFile(filepath.Join(e.state, "events.jsonl"))
	if n := bytes.Count(ev, []byte(`"discovery report: the discovery inbox is full"`)); n != flood-bound {
		t.Errorf("%d refused events of a full inbox, want %d", n, flood-bound)
	}
	if n := bytes.Count(ev, []byte(`"discovery report: missing or wrong discovery token"`)); n != 2 {
		t.Errorf("%d refused events of a missing or wrong token, want 2", n)
	}
	if bytes.Contains(ev, []byte(token)) {
		t.Error("the event log holds the window's token")
	}
}
