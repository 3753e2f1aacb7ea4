package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/client"
)

// daemonAPI is a node-provisioner daemon process on a state folder of its
// own, with an admin and a read token, reached over HTTPS as a client
// that has not pinned it would (the suite checks refusals, not TLS).
type daemonAPI struct {
	state, base, admin, read string
	d                        *apiDaemon
	http                     *http.Client
}

func startDaemonAPI(t *testing.T) *daemonAPI {
	t.Helper()
	state := t.TempDir()
	a := &daemonAPI{state: state}
	a.admin = npOut(t, state, "token", "create", "ops", "--scope", "admin")
	a.read = npOut(t, state, "token", "create", "watch", "--scope", "read")
	fp := npOut(t, state, "tls", "fingerprint")
	addr := freeAddr(t)
	a.base = "https://" + addr + "/api/v1"
	c, err := client.New(client.Options{URL: "https://" + addr, Token: a.admin, Fingerprint: fp})
	if err != nil {
		t.Fatal(err)
	}
	a.d = startDaemon(t, state, addr, c)
	t.Cleanup(func() {
		a.d.cmd.Process.Signal(syscall.SIGTERM)
		a.d.cmd.Wait()
	})
	a.http = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	return a
}

// do sends a request with token and returns the status and body.
func (a *daemonAPI) do(t *testing.T, method, path, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, a.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}

// stream opens GET /events with token; the caller closes the body.
func (a *daemonAPI) stream(t *testing.T, token string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", a.base+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := a.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestTheDaemonFailsClosed: against one real daemon process, what the
// API's own tests prove in-process: a TTL not in the future does not
// open a window; a scope, or a BMC key, in another case is refused with
// 400 and makes nothing; a stream ends once its token is revoked; one
// token holds at most 8 streams while another still gets one; a valid
// token is served after 10 bad ones from the same address; a refused
// (409) re-registration keeps the BMC password and DELETE removes it, as
// does a registration without a BMC replacing it; token list of a token
// in use does not say "never"; a window does not open while a pending
// registration holds a value the installer would refuse (503 naming it),
// and register refuses such a value against site.json.
func TestTheDaemonFailsClosed(t *testing.T) {
	a := startDaemonAPI(t)
	pw := func(name string) (string, bool) {
		b, err := os.ReadFile(filepath.Join(a.state, "secrets", name+".bmc.pw"))
		return strings.TrimSpace(string(b)), err == nil
	}
	t.Run("a TTL not in the future", func(t *testing.T) {
		if code, body := a.do(t, "PUT", "/window", a.admin, `{"ttl":"1ns"}`); code != 422 {
			t.Errorf("PUT /window 1ns: %d %s, want 422", code, body)
		}
		if code, body := a.do(t, "GET", "/window", a.read, ""); code != 200 || !strings.Contains(body, `"open":false`) {
			t.Errorf("GET /window after a 1ns TTL: %d %s, want closed", code, body)
		}
	})
	t.Run("keys in another case", func(t *testing.T) {
		if code, body := a.do(t, "POST", "/tokens", a.admin, `{"name":"x","scope":"read","Scope":"admin"}`); code != 400 || !strings.Contains(body, `Scope`) {
			t.Errorf("POST /tokens with Scope: %d %s, want 400 naming it", code, body)
		}
		if out, _, _ := npRun(t, a.state, "", "token", "list"); strings.Contains(out, "x ") {
			t.Errorf("a refused token request made token x:\n%s", out)
		}
		if code, body := a.do(t, "POST", "/registrations", a.admin, `{"name":"pve1","boot_disk":"sda","bmc":{"url":"ipmi://10.0.0.9","user":"admin","usr":"x"},"bmc_password":"pw"}`); code != 400 || !strings.Contains(body, `bmc.usr`) {
			t.Errorf("POST /registrations with bmc.usr: %d %s, want 400 naming it", code, body)
		}
		if _, ok := pw("pve1"); ok {
			t.Error("a refused registration kept a BMC password")
		}
	})
	t.Run("a stream ends when its token is revoked", func(t *testing.T) {
		tok := npOut(t, a.state, "token", "create", "brief", "--scope", "read")
		resp := a.stream(t, tok)
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("stream: %d", resp.StatusCode)
		}
		if _, errOut, code := npRun(t, a.state, a.admin, "token", "revoke", "brief"); code != 0 {
			t.Fatalf("token revoke: %d %s", code, errOut)
		}
		done := make(chan string, 1)
		go func() {
			b, _ := io.ReadAll(resp.Body)
			done <- string(b)
		}()
		select {
		case body := <-done:
			if !strings.Contains(body, ": token revoked") {
				t.Errorf("the stream ended without saying why:\n%s", body)
			}
		case <-time.After(15 * time.Second):
			t.Error("the stream of a revoked token still runs after 15 s")
		}
	})
	t.Run("streams are bounded per token", func(t *testing.T) {
		var open []*http.Response
		defer func() {
			for _, r := range open {
				r.Body.Close()
			}
		}()
		for i := range 8 {
			r := a.stream(t, a.read)
			open = append(open, r)
			if r.StatusCode != 200 {
				t.Fatalf("stream %d of the read token: %d", i+1, r.StatusCode)
			}
		}
		r := a.stream(t, a.read)
		open = append(open, r)
		if r.StatusCode != 429 {
			t.Errorf("a ninth stream of the read token: %d, want 429", r.StatusCode)
		}
		if r := a.stream(t, a.admin); r.StatusCode != 200 {
			t.Errorf("another token's stream beside them: %d, want 200", r.StatusCode)
		} else {
			open = append(open, r)
		}
	})
	t.Run("a valid token after ten bad ones", func(t *testing.T) {
		for i := range 10 {
			if code, _ := a.do(t, "GET", "/registrations", fmt.Sprintf("npt_bad%02d", i), ""); code != 401 && code != 429 {
				t.Errorf("bad token %d: %d, want 401 or 429", i, code)
			}
		}
		if code, body := a.do(t, "GET", "/registrations", a.read, ""); code != 200 {
			t.Errorf("the read token after ten bad ones from its address: %d %s, want 200", code, body)
		}
	})
	t.Run("the BMC password follows its registration", func(t *testing.T) {
		bmc := func(mac, pass string) string {
			return `{"name":"pve1","macs":["` + mac + `"],"boot_disk":"sda","bmc":{"url":"ipmi://10.0.0.9","user":"admin"},"bmc_password":"` + pass + `"}`
		}
		if code, body := a.do(t, "POST", "/registrations", a.admin, bmc("52:54:00:fc:00:01", "first")); code != 201 {
			t.Fatalf("register pve1: %d %s", code, body)
		}
		if code, body := a.do(t, "POST", "/registrations", a.admin, `{"name":"pve2","macs":["52:54:00:fc:00:02"],"boot_disk":"sda"}`); code != 201 {
			t.Fatalf("register pve2: %d %s", code, body)
		}
		if code, body := a.do(t, "POST", "/registrations", a.admin, bmc("52:54:00:fc:00:02", "second")); code != 409 {
			t.Errorf("pve1 with pve2's MAC: %d %s, want 409", code, body)
		}
		if got, ok := pw("pve1"); !ok || got != "first" {
			t.Errorf("after the refused re-registration pve1.bmc.pw holds %q (there: %v), want the first", got, ok)
		}
		if code, body := a.do(t, "DELETE", "/registrations/pve1", a.admin, ""); code != 204 {
			t.Fatalf("DELETE pve1: %d %s", code, body)
		}
		if _, ok := pw("pve1"); ok {
			t.Error("DELETE left pve1.bmc.pw")
		}
		if code, body := a.do(t, "POST", "/registrations", a.admin, bmc("52:54:00:fc:00:01", "third")); code != 201 {
			t.Fatalf("register pve1 again: %d %s", code, body)
		}
		if code, body := a.do(t, "POST", "/registrations", a.admin, `{"name":"pve1","macs":["52:54:00:fc:00:01"],"boot_disk":"sda"}`); code != 201 {
			t.Fatalf("register pve1 without a BMC: %d %s", code, body)
		}
		if _, ok := pw("pve1"); ok {
			t.Error("pve1 registered again without a BMC kept pve1.bmc.pw")
		}
		for _, n := range []string{"pve1", "pve2"} {
			a.do(t, "DELETE", "/registrations/"+n, a.admin, "")
		}
	})
	t.Run("token list of a token in use", func(t *testing.T) {
		out, errOut, code := npRun(t, a.state, "", "token", "list", "-o", "json")
		if code != 0 {
			t.Fatalf("token list: %d %s", code, errOut)
		}
		var toks []struct {
			Name     string    `json:"name"`
			LastUsed time.Time `json:"last_used"`
		}
		if err := json.Unmarshal([]byte(out), &toks); err != nil {
			t.Fatalf("token list -o json: %v\n%s", err, out)
		}
		for _, tk := range toks {
			if (tk.Name == "ops" || tk.Name == "watch") && tk.LastUsed.IsZero() {
				t.Errorf("token %s, in use by the daemon, is listed as never used:\n%s", tk.Name, out)
			}
		}
	})
	t.Run("answer values against the site settings", func(t *testing.T) {
		long := strings.Repeat("a", 63)
		name := "n" + strings.Repeat("0", 59)
		if code, body := a.do(t, "POST", "/registrations", a.admin, `{"name":"`+name+`","macs":["52:54:00:fc:00:09"],"boot_disk":"sda"}`); code != 201 {
			t.Fatalf("register %s: %d %s", name, code, body)
		}
		site := filepath.Join(a.state, "site.json")
		if err := os.WriteFile(site, []byte(`{"domain":"`+long+"."+long+"."+long+`.ex"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(site)
		code, body := a.do(t, "PUT", "/window", a.admin, `{"ttl":"1h"}`)
		if code != 503 || !strings.Contains(body, "registration "+name) || !strings.Contains(body, "the installer would refuse") {
			t.Errorf("PUT /window with %s's FQDN too long: %d %s, want 503 naming it", name, code, body)
		}
		if code, body := a.do(t, "GET", "/window", a.read, ""); code != 200 || !strings.Contains(body, `"open":false`) {
			t.Errorf("GET /window after the refusal: %d %s, want closed", code, body)
		}
		other := "m" + strings.Repeat("0", 59)
		if _, errOut, code := npRun(t, a.state, a.admin, "register", other, "--mac", "52:54:00:fc:00:0a", "--boot-disk", "sda"); code != 2 || !strings.Contains(errOut, other) || !strings.Contains(errOut, "global.fqdn") {
			t.Errorf("register %s against site.json: exit %d %q, want 2 naming it", other, code, errOut)
		}
		if code, body := a.do(t, "POST", "/registrations", a.admin, `{"name":"`+other+`","macs":["52:54:00:fc:00:0a"],"boot_disk":"sda"}`); code != 422 || !strings.Contains(body, "global.fqdn") {
			t.Errorf("POST /registrations %s against site.json: %d %s, want 422", other, code, body)
		}
		a.do(t, "DELETE", "/registrations/"+name, a.admin, "")
	})
}

// TestSiteSettingsTheInstallerWouldRefuse: a site.json the installer would
// refuse an answer built from (a time zone it does not know, TAPPaaS's
// location.timezone misspelt) stops serve and the daemon at start with
// exit 2 naming the file and the value; register refuses a registration
// whose answer would be refused with site.json's domain, exit 2, writing
// nothing.
func TestSiteSettingsTheInstallerWouldRefuse(t *testing.T) {
	e := newProvisionerEnv(t)
	e.run(t, "register", "pve1", "--mac", "52:54:00:fd:00:01", "--boot-disk", "sda")
	site := filepath.Join(e.state, "site.json")
	for _, c := range []struct{ file, want string }{
		{`{"timezone":"Mars/Olympus"}`, `"Mars/Olympus": not a time zone the installer knows`},
		{`{"location":{"timezone":"Europe/Viena"}}`, `did you mean "Europe/Vienna"?`},
		{`{"country":"xx"}`, `"xx": not a country code the installer knows`},
	} {
		os.WriteFile(site, []byte(c.file), 0o600)
		code, out := e.npExit(t, "serve", "--http", "127.0.0.1:0", "--ttl", "1m")
		if code != 2 || !strings.Contains(out, c.want) || !strings.Contains(out, "site.json") || strings.Contains(out, "Serving answers") {
			t.Errorf("serve with site.json %s: exit %d\n%s\nwant 2 naming site.json and %q", c.file, code, out, c.want)
		}
		code, out = e.npExit(t, "daemon", "--api", "127.0.0.1:0", "--http", "127.0.0.1:0")
		if code != 2 || !strings.Contains(out, c.want) || !strings.Contains(out, "site.json") {
			t.Errorf("daemon with site.json %s: exit %d\n%s\nwant 2 naming site.json and %q", c.file, code, out, c.want)
		}
	}
	if list, out := e.listJSON(t); len(list) != 1 || list[0].State != "pending" {
		t.Errorf("the registrations after the refused starts:\n%s", out)
	}
	long := strings.Repeat("a", 63)
	os.WriteFile(site, []byte(`{"domain":"`+long+"."+long+"."+long+`.ex"}`), 0o600)
	name := "n" + strings.Repeat("0", 59)
	if code, out := e.npExit(t, "register", name, "--mac", "52:54:00:fd:00:02", "--boot-disk", "sda"); code != 2 || !strings.Contains(out, name) || !strings.Contains(out, "global.fqdn") {
		t.Errorf("register %s with site.json's long domain: exit %d\n%s\nwant 2 naming it", name, code, out)
	}
	if list, out := e.listJSON(t); len(list) != 1 {
		t.Errorf("the refused register wrote:\n%s", out)
	}
}

// TestEnableThroughADaemonSaysWhyTheWindowDidNotOpen: a daemon whose
// window port is taken answers enable's open with the window's own
// reason, which enable says (exit 1), rather than "see its log"; the
// window stays closed.
func TestEnableThroughADaemonSaysWhyTheWindowDidNotOpen(t *testing.T) {
	state := t.TempDir()
	admin := npOut(t, state, "token", "create", "ops", "--scope", "admin")
	fp := npOut(t, state, "tls", "fingerprint")
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := freeAddr(t)
	cmd := exec.Command(filepath.Join(bin, "node-provisioner"), "--state-dir", state, "--secrets-dir", filepath.Join(state, "secrets"),
		"--log-format", "json", "daemon", "--api", addr, "--http", taken.Addr().String())
	cmd.Env = append(os.Environ(), "HOME="+state)
	var logs strings.Builder
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	c, err := client.New(client.Options{URL: "https://" + addr, Token: admin, Fingerprint: fp})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for c.Health(ctx) != nil {
		if ctx.Err() != nil {
			t.Fatalf("the daemon did not answer:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, errOut, code := npRun(t, state, admin, "enable", "--ttl", "5m")
	if code != 1 || !strings.Contains(errOut, "the window did not open") || !strings.Contains(errOut, "cannot listen") || strings.Contains(errOut, "see its log") {
		t.Errorf("enable through a daemon whose window port is taken: exit %d, stderr %q; want 1 with the window's reason", code, errOut)
	}
	if w, err := c.Window(ctx); err != nil || w.Open {
		t.Errorf("window after the failed enable: %+v %v, want closed", w, err)
	}
}
