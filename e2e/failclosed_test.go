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
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/internal/fakehcloud"
	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// The hardening suite of issue 27: each test drives the binaries where an
// operator or a neighbour can reach them and checks they fail closed.

// npExit runs node-provisioner in e and returns its exit code and
// combined output.
func (e provisionerEnv) npExit(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := e.cmd(ctx, args...).CombinedOutput()
	code := 0
	if err != nil {
		code = -1
		if ee, ok := err.(interface{ ExitCode() int }); ok {
			code = ee.ExitCode()
		}
	}
	return code, string(out)
}

// TestServeRefusesAnswerValuesTheInstallerWould: serve with a time zone
// or country the installer's locale list does not hold exits 2 naming
// it (with the nearest valid one) before it listens, so no registration
// is consumed; a pending registration whose answer the installer would
// refuse stops the window too; validate-answer refuses such a file.
func TestServeRefusesAnswerValuesTheInstallerWould(t *testing.T) {
	e := newProvisionerEnv(t)
	e.run(t, "register", "pve1", "--mac", "52:54:00:7a:00:01", "--boot-disk", "sda")
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--timezone", "Mars/Olympus"}, `"Mars/Olympus": not a time zone the installer knows`},
		{[]string{"--timezone", "Europe/Viena"}, `did you mean "Europe/Vienna"?`},
		{[]string{"--country", "xx"}, `"xx": not a country code the installer knows`},
	} {
		code, out := e.npExit(t, append([]string{"serve", "--http", "127.0.0.1:0", "--ttl", "1m"}, c.flags...)...)
		if code != 2 || !strings.Contains(out, c.want) || strings.Contains(out, "Serving answers") {
			t.Errorf("serve %v: exit %d\n%s\nwant 2 with %q, before serving", c.flags, code, out, c.want)
		}
	}
	// A domain with which one registration's FQDN is too long for the
	// installer (over 253 characters), the site's probe name's is not.
	long := strings.Repeat("a", 63)
	domain := strings.Join([]string{long, long, long, "ex"}, ".") // 194 characters
	name := "n" + strings.Repeat("0", 59)
	e.run(t, "register", name, "--mac", "52:54:00:7a:00:02", "--boot-disk", "sda")
	if code, out := e.npExit(t, "serve", "--http", "127.0.0.1:0", "--ttl", "1m", "--domain", domain); code != 2 || !strings.Contains(out, "registration "+name) || strings.Contains(out, "registration pve1") {
		t.Errorf("serve with a domain making %s's FQDN too long: exit %d\n%s\nwant 2 naming it alone", name, code, out)
	}
	if list, out := e.listJSON(t); len(list) != 2 || list[0].State != "pending" || list[1].State != "pending" {
		t.Errorf("the registrations after the refused windows:\n%s", out)
	}
	f := filepath.Join(e.home, "answer.toml")
	os.WriteFile(f, []byte("[global]\nkeyboard = \"de\"\ncountry = \"at\"\nfqdn = \"pve1.lab.example\"\nmailto = \"ops@lab.example\"\ntimezone = \"Europe/Viena\"\nroot-password = \"correct-horse\"\n\n[network]\nsource = \"from-dhcp\"\n\n[disk-setup]\nfilesystem = \"ext4\"\ndisk-list = [\"sda\"]\n"), 0o644)
	if code, out := e.npExit(t, "validate-answer", f); code != 1 || !strings.Contains(out, "Europe/Viena") {
		t.Errorf("validate-answer of a file with timezone Europe/Viena: exit %d\n%s\nwant 1 naming it", code, out)
	}
}

// TestDaemonRefusesSiteSettingsTheInstallerWould: the daemon with a time
// zone the installer does not know exits 2 at start, naming it, rather
// than failing each window later.
func TestDaemonRefusesSiteSettingsTheInstallerWould(t *testing.T) {
	e := newProvisionerEnv(t)
	code, out := e.npExit(t, "daemon", "--api", "127.0.0.1:0", "--http", "127.0.0.1:0", "--timezone", "Mars/Olympus")
	if code != 2 || !strings.Contains(out, "Mars/Olympus") {
		t.Errorf("daemon --timezone Mars/Olympus: exit %d\n%s\nwant 2 naming it", code, out)
	}
}

// TestServeResistsMACSpraying: against serve, a system info listing more
// than 64 interfaces (a body of 30 000 made-up ones, under the body limit, holding
// the pinned MAC) is refused with 400 saying so and consumes nothing; the
// status page and GET /status show the pinned MAC cut to its last
// octets; serve warns that it answers without an answer token; the real
// machine is answered after the spray.
func TestServeResistsMACSpraying(t *testing.T) {
	e := newProvisionerEnv(t)
	const pinned = "52:54:00:5a:00:01"
	e.run(t, "register", "pve1", "--mac", pinned, "--boot-disk", "sda")
	url, logs := e.serve(t)
	base := strings.TrimSuffix(url, "/answer")
	real, err := os.ReadFile("../answer/testdata/sysinfo/pve-9.2-synthetic.json")
	if err != nil {
		t.Fatal(err)
	}
	var ifs []string
	for i := range 30000 { // under the 1 MiB body limit
		ifs = append(ifs, fmt.Sprintf(`{"mac":"02:00:%02x:%02x:%02x:01"}`, i>>16&0xff, i>>8&0xff, i&0xff))
	}
	ifs[len(ifs)-1] = `{"mac":"` + pinned + `"}`
	spray := `{"iso":{"release":"9.2"},"product":{"product":"pve"},"network_interfaces":[` + strings.Join(ifs, ",") + `]}`
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Post(url, "application/json", strings.NewReader(spray))
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(msg), "over 64 network interfaces") {
		t.Errorf("a body of 30 000 interfaces: %d %q, want 400 saying over 64", resp.StatusCode, msg)
	}
	if list, out := e.listJSON(t); len(list) != 1 || list[0].State != "pending" {
		t.Errorf("the spray consumed the registration:\n%s", out)
	}
	for _, path := range []string{"/", "/status"} {
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), pinned) || !strings.Contains(string(b), "…:00:01") {
			t.Errorf("GET %s shows the pinned MAC %s in full (or not its tail):\n%.2000s", path, pinned, b)
		}
	}
	// The installer's own body names the pinned MAC.
	body := strings.Replace(string(real), `"network_interfaces":[`, `"network_interfaces":[{"link":"x","mac":"`+pinned+`"},`, 1)
	resp, err = client.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("the real machine after the spray: %d, want 200", resp.StatusCode)
	}
	if !strings.Contains(logs.String(), "answers are served without an answer token") {
		t.Errorf("serve did not warn that it answers without an answer token:\n%s", logs.String())
	}
}

// TestDaemonTLSFlags: the daemon takes --tls-cert and --tls-key together
// (one alone is exit 2 naming both); tls fingerprint --cert prints a
// certificate file's fingerprint for clients to pin, and a file that is
// no certificate is exit 2.
func TestDaemonTLSFlags(t *testing.T) {
	e := newProvisionerEnv(t)
	if code, out := e.npExit(t, "daemon", "--api", "127.0.0.1:0", "--tls-cert", "site.pem"); code != 2 || !strings.Contains(out, "--tls-cert and --tls-key go together") {
		t.Errorf("daemon --tls-cert alone: exit %d\n%s", code, out)
	}
	fp := strings.TrimSpace(e.run(t, "tls", "fingerprint"))
	pem := filepath.Join(e.state, "tls", "cert.pem")
	if got := strings.TrimSpace(e.run(t, "tls", "fingerprint", "--cert", pem)); got != fp {
		t.Errorf("tls fingerprint --cert of the state folder's certificate: %q, want %q", got, fp)
	}
	if code, out := e.npExit(t, "tls", "fingerprint", "--cert", filepath.Join(e.home, ".ssh", "id_ed25519.pub")); code != 2 || !strings.Contains(out, "--cert") {
		t.Errorf("tls fingerprint --cert of a key file: exit %d\n%s", code, out)
	}
}

// TestOneNameRuleInBothBinaries: a bad node name gets the same rule in
// the same words from plasma-node and node-provisioner, exit 2 from both,
// whatever is wrong with it (an '_', upper case, digits only, a trailing '-').
func TestOneNameRuleInBothBinaries(t *testing.T) {
	const rule = "want a-z, 0-9 and '-', 1 to 63 characters, no leading or trailing '-', not digits only"
	e := newProvisionerEnv(t)
	dir := t.TempDir()
	pn := func(args ...string) (int, string) {
		c := exec.Command(filepath.Join(bin, "plasma-node"), append([]string{"--dir", dir}, args...)...)
		out, err := c.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return code, string(out)
	}
	if code, out := pn("add", "demo", "--provider", "manual", "--domain", "example.com"); code != 0 {
		t.Fatalf("add demo: %d %s", code, out)
	}
	for _, name := range []string{"pve_1", "Pve1", "4242", "pve-"} {
		code, out := pn("add", "demo", "--hostname", name)
		if code != 2 || !strings.Contains(out, rule) {
			t.Errorf("plasma-node add --hostname %s: exit %d %q, want 2 with the rule", name, code, out)
		}
		code, out = e.npExit(t, "register", name, "--boot-disk", "sda")
		if code != 2 || !strings.Contains(out, rule) {
			t.Errorf("node-provisioner register %s: exit %d %q, want 2 with the rule", name, code, out)
		}
	}
}

// TestNaturalSortInListAndPage: tappaas3 comes before tappaas10 in list
// (table and JSON) and on serve's status page.
func TestNaturalSortInListAndPage(t *testing.T) {
	e := newProvisionerEnv(t)
	for i, n := range []string{"tappaas10", "tappaas3", "tappaas1"} {
		e.run(t, "register", n, "--mac", fmt.Sprintf("52:54:00:50:00:%02x", i+1), "--boot-disk", "sda")
	}
	want := []string{"tappaas1", "tappaas3", "tappaas10"}
	order := func(s string) []string {
		var got []string
		for _, n := range want {
			got = append(got, fmt.Sprint(strings.Index(s, n+" ")))
		}
		return got
	}
	inOrder := func(s string, sep string) bool {
		last := -1
		for _, n := range want {
			i := strings.Index(s, n+sep)
			if i <= last {
				return false
			}
			last = i
		}
		return true
	}
	if out := e.run(t, "list"); !inOrder(out, " ") {
		t.Errorf("list is not in natural order (%v):\n%s", order(out), out)
	}
	if list, out := e.listJSON(t); len(list) != 3 || list[0].Name != want[0] || list[1].Name != want[1] || list[2].Name != want[2] {
		t.Errorf("list -o json is not in natural order:\n%s", out)
	}
	url, _ := e.serve(t)
	resp, err := http.Get(strings.TrimSuffix(url, "/answer") + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !inOrder(string(b), `"`) {
		t.Errorf("the status page is not in natural order")
	}
}

// TestBrokenEntriesAlikeInBothBinaries: a registration or node file that
// cannot be read (malformed, or a folder named like one) makes list exit
// 1 in both binaries, with the good entries listed and one error line per
// broken one, then the count.
func TestBrokenEntriesAlikeInBothBinaries(t *testing.T) {
	e := newProvisionerEnv(t)
	e.run(t, "register", "pve1", "--mac", "52:54:00:b0:00:01", "--boot-disk", "sda")
	os.WriteFile(filepath.Join(e.state, "registrations", "bad.json"), []byte("{bad"), 0o600)
	os.Mkdir(filepath.Join(e.state, "registrations", "dir.json"), 0o700)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	check := func(who string, c *exec.Cmd, good string, files ...string) {
		t.Helper()
		var stdout, stderr strings.Builder
		c.Stdout, c.Stderr = &stdout, &stderr
		err := c.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if code != 1 || !strings.Contains(stdout.String(), good) || len(lines) != len(files)+1 {
			t.Errorf("%s list: exit %d, stdout:\n%s\nstderr:\n%s\nwant 1, %s listed, one error per broken entry and the count", who, code, stdout.String(), stderr.String(), good)
			return
		}
		for i, f := range files {
			if !strings.HasPrefix(lines[i], who+": ") || !strings.Contains(lines[i], f) {
				t.Errorf("%s list: error line %d %q, want one naming %s", who, i, lines[i], f)
			}
		}
		if !strings.Contains(lines[len(files)], "2 ") || !strings.Contains(lines[len(files)], "could not be read; the others are listed") {
			t.Errorf("%s list: last line %q, want the count", who, lines[len(files)])
		}
	}
	check("node-provisioner", e.cmd(ctx, "list"), "pve1", "bad.json", "dir.json")
	dir := t.TempDir()
	pn := func(args ...string) *exec.Cmd {
		return exec.CommandContext(ctx, filepath.Join(bin, "plasma-node"), append([]string{"--dir", dir}, args...)...)
	}
	for _, args := range [][]string{{"add", "demo", "--provider", "manual", "--domain", "example.com"}, {"add", "demo", "--hostname", "node001", "--public-ip", "51.159.0.1"}} {
		if out, err := pn(args...).CombinedOutput(); err != nil {
			t.Fatalf("plasma-node %v: %v\n%s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(dir, "platforms", "demo", "nodes", "bad.yaml"), []byte("hostname: ["), 0o644)
	os.Mkdir(filepath.Join(dir, "platforms", "demo", "nodes", "x.yaml"), 0o755)
	check("plasma-node", pn("list"), "node001", "bad.yaml", "x.yaml")
}

// TestServePageShowsBMCActionsLive: a BMC action another process records
// in the event log (node-provisioner power, the daemon's API) reaches the
// open window's page and GET /status within seconds, not only after the
// window reopens.
func TestServePageShowsBMCActionsLive(t *testing.T) {
	e := newProvisionerEnv(t)
	e.run(t, "register", "pve1", "--mac", "52:54:00:b3:00:01", "--boot-disk", "sda")
	url, _ := e.serve(t)
	base := strings.TrimSuffix(url, "/answer")
	other := folder.OpenEvents(folder.EventsPath(e.state), folder.EventsOptions{})
	defer other.Close()
	if err := other.Append(context.Background(), events.Event{Kind: events.BMC, Node: "pve1", Status: 200, Detail: "power on: done (redfish)"}); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get(base + "/status")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), "power on: done (redfish)") {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("the BMC action is not on the open window's status after 10 s:\n%s", b)
		}
	}
}

// TestEnableOnAnOpenWindowAndItsWarnings: enable says the window's own
// warnings (no boot assets staged) in its voice; enable with settings on
// an open window refuses (exit 1) naming them rather than claim it opened
// with them, and without settings says it is open; a window that cannot
// start (its port taken) is exit 1 with the window's own reason.
func TestEnableOnAnOpenWindowAndItsWarnings(t *testing.T) {
	e := newProvisionerEnv(t)
	e.run(t, "register", "pve1", "--mac", "52:54:00:e0:00:01", "--boot-disk", "sda")
	t.Cleanup(func() { e.npExit(t, "disable") })
	code, out := e.npExit(t, "enable", "--http", "127.0.0.1:0", "--ttl", "5m")
	if code != 0 || !strings.Contains(out, "Provisioning window open") || !strings.Contains(out, "node-provisioner: warning: no boot assets staged") {
		t.Fatalf("enable: exit %d\n%s\nwant 0 with the window's warnings", code, out)
	}
	code, out = e.npExit(t, "enable", "--ttl", "30m")
	if code != 1 || !strings.Contains(out, "already open") || !strings.Contains(out, "--ttl would need a new window") {
		t.Errorf("enable --ttl 30m on an open window: exit %d\n%s\nwant 1 refusing", code, out)
	}
	if code, out = e.npExit(t, "enable"); code != 0 || !strings.Contains(out, "already open") {
		t.Errorf("enable on an open window: exit %d\n%s", code, out)
	}
	if code, out = e.npExit(t, "disable"); code != 0 {
		t.Fatalf("disable: %d %s", code, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	code, out = e.npExit(t, "enable", "--http", ln.Addr().String(), "--ttl", "5m")
	if code != 1 || !strings.Contains(out, "cannot listen") {
		t.Errorf("enable on a taken port: exit %d\n%s\nwant 1 with the window's reason", code, out)
	}
}

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

// pnExit runs plasma-node on project dir with env added to a clean
// environment and returns its exit code and combined output.
func pnExit(t *testing.T, dir string, env []string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, filepath.Join(bin, "plasma-node"), append([]string{"--dir", dir}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "NODE_PROVISIONER_") && !strings.HasPrefix(kv, "HCLOUD_") {
			c.Env = append(c.Env, kv)
		}
	}
	c.Env = append(append(c.Env, "HOME="+dir), env...)
	out, err := c.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("plasma-node %v: %v", args, err)
	}
	return code, string(out)
}

// TestPlasmaNodeFailsClosed: through the binary, destroy and delete of a
// pxe platform whose registrations cannot be reached (a provisioner
// folder that is not there, a provisioner_url nothing answers) exit 1
// saying so and change nothing, the registrations still pending; a count
// of 99999 is exit 2 naming the bound; a top-level typo in platform.yaml
// (poolz:) is exit 2 naming the section meant; neither writes.
func TestPlasmaNodeFailsClosed(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	hw := filepath.Join(state, "hardware.yaml")
	os.WriteFile(hw, []byte("machines:\n  - macs: [\"52:54:00:fe:00:01\"]\n    boot_disk: sda\n"), 0o644)
	ok := func(args ...string) {
		t.Helper()
		if code, out := pnExit(t, dir, nil, args...); code != 0 {
			t.Fatalf("plasma-node %v: exit %d\n%s", args, code, out)
		}
	}
	ok("add", "metal", "--provider", "pxe", "--domain", "mgmt.example")
	ok("--provisioner-dir", filepath.Join(state, "np"), "provision", "metal", "-z", "foundation.cluster.control:pve:1", "--hardware", hw, "--auto-approve")
	regs := func() int {
		names, _ := filepath.Glob(filepath.Join(state, "np", "registrations", "*.json"))
		return len(names)
	}
	refused := func(name string, env []string, args ...string) {
		t.Helper()
		before := snapshotFiles(t, dir)
		code, out := pnExit(t, dir, env, args...)
		if code != 1 || !strings.Contains(out, "registrations not reachable") || strings.Contains(out, "Withdrew") {
			t.Errorf("%s: exit %d\n%s\nwant 1 saying the registrations are not reachable", name, code, out)
		}
		if diff := cmp.Diff(before, snapshotFiles(t, dir)); diff != "" {
			t.Errorf("%s changed the project (-before +after):\n%s", name, diff)
		}
		if regs() != 1 {
			t.Errorf("%s: %d pending registrations, want the one kept", name, regs())
		}
	}
	absent := filepath.Join(state, "absent")
	refused("destroy through an absent folder", nil, "--provisioner-dir", absent, "destroy", "metal", "--force")
	refused("delete through an absent folder", nil, "--provisioner-dir", absent, "delete", "metal-control-001", "--force")
	if _, err := nodes.Open(dir, nodes.Options{}).UpdatePlatform(context.Background(), "metal", func(p *nodes.Platform) error {
		p.Infrastructure.ProvisionerDir = ""
		p.Infrastructure.ProvisionerURL = "https://127.0.0.1:1"
		p.Infrastructure.ProvisionerFingerprint = strings.Repeat("AB:", 31) + "AB"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	token := []string{"NODE_PROVISIONER_TOKEN=npt_unreachable"}
	refused("destroy through a provisioner_url nothing answers", token, "destroy", "metal", "--force")
	refused("delete through a provisioner_url nothing answers", token, "delete", "metal-control-001", "--force")

	ok("add", "demo", "--provider", "hetzner")
	before := snapshotFiles(t, dir)
	if code, out := pnExit(t, dir, nil, "provision", "demo", "-z", "web:cx22:99999", "--auto-approve"); code != 2 || !strings.Contains(out, "count 99999 is over 999") {
		t.Errorf("provision of 99999: exit %d\n%s\nwant 2 naming the bound", code, out)
	}
	f := filepath.Join(dir, "platforms", "demo", "platform.yaml")
	b, _ := os.ReadFile(f)
	os.WriteFile(f, append(b, []byte("poolz:\n  web: {count: 1}\n")...), 0o644)
	if code, out := pnExit(t, dir, nil, "add", "demo", "--hostname", "node003", "--public-ip", "51.159.0.3"); code != 2 || !strings.Contains(out, "poolz") || !strings.Contains(out, "pools") {
		t.Errorf("add with poolz: in platform.yaml: exit %d\n%s\nwant 2 naming poolz and pools", code, out)
	}
	os.WriteFile(f, b, 0o644)
	if diff := cmp.Diff(before, snapshotFiles(t, dir)); diff != "" {
		t.Errorf("the refused commands wrote (-before +after):\n%s", diff)
	}
}

// TestDeleteKeepServerLowersThePool: through the binary with the real tofu
// against the fake Hetzner API, delete NODE --keep-server removes the
// node file, keeps its server and lowers its pool's count, so the next
// provision creates no second server of its hostname.
func TestDeleteKeepServerLowersThePool(t *testing.T) {
	token := strings.Repeat("f", 64)
	fake := fakehcloud.Start(token)
	defer fake.Close()
	f := newFlow(t, fake, token, nodes.State{})
	ctx := context.Background()
	f.ok(ctx, "provision", "demo", "-z", "web:cx22:2", "--auto-approve")
	out := f.ok(ctx, "delete", "demo-web-002", "--keep-server")
	if !strings.Contains(out, "Kept server") || !strings.Contains(out, "count lowered by one") {
		t.Errorf("delete --keep-server: %q", out)
	}
	if n := len(fake.Servers()); n != 2 {
		t.Errorf("%d servers after delete --keep-server, want both kept", n)
	}
	if p, err := nodes.Open(f.project, nodes.Options{}).Platform(ctx, "demo"); err != nil || p.Pools["web"].Count != 1 {
		t.Errorf("pool web after delete --keep-server: %+v %v, want count 1", p.Pools["web"], err)
	}
	if out := f.ok(ctx, "provision", "demo", "--auto-approve"); !strings.Contains(out, noChange) {
		t.Errorf("provision after delete --keep-server changes something:\n%s", out)
	}
	if n := len(fake.Servers()); n != 2 {
		t.Errorf("%d servers after the next provision, want 2 (no second demo-web-002)", n)
	}
}

// TestTheCLIsVoiceAndExitCodes: through the node-provisioner binary, a
// re-registration's warning is said once in its voice with no log line
// beside it; --ttl 7200 is seconds; a malformed --http address and an
// empty --boot-disk are bad input, exit 2, writing nothing.
func TestTheCLIsVoiceAndExitCodes(t *testing.T) {
	e := newProvisionerEnv(t)
	e.run(t, "register", "a1", "--mac", "52:54:00:fe:01:01", "--boot-disk", "sda")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := e.cmd(ctx, "register", "a1", "--mac", "52:54:00:fe:01:02", "--boot-disk", "sda")
	var stderr strings.Builder
	c.Stderr = &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("re-register: %v\n%s", err, stderr.String())
	}
	want := "node-provisioner: warning: a1 was registered already and is replaced: macs 52:54:00:fe:01:01 -> 52:54:00:fe:01:02\n"
	if stderr.String() != want {
		t.Errorf("re-register: stderr %q, want exactly %q", stderr.String(), want)
	}
	before := regularFilesUnder(t, e.state)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--ttl", "7200", "--http", "nonsense"}, `--http "nonsense": want HOST:PORT`},
		{[]string{"serve", "--ttl", "2x", "--http", "127.0.0.1:0"}, "or a number of seconds such as 7200"},
		{[]string{"register", "pve1", "--mac", "52:54:00:fe:01:03", "--boot-disk", ""}, "--boot-disk: empty value"},
	} {
		if code, out := e.npExit(t, tc.args...); code != 2 || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d\n%s\nwant 2 with %q", tc.args, code, out, tc.want)
		}
	}
	if after := regularFilesUnder(t, e.state); !slices.Equal(before, after) {
		t.Errorf("bad input wrote: %v, was %v", after, before)
	}
	// --ttl 7200 is two hours: the window's deadline says so.
	t.Cleanup(func() { e.npExit(t, "disable") })
	if code, out := e.npExit(t, "enable", "--http", "127.0.0.1:0", "--ttl", "7200"); code != 0 {
		t.Fatalf("enable --ttl 7200: exit %d\n%s", code, out)
	}
	out, _, _ := npRun(t, e.state, "", "status", "-o", "json")
	var st struct {
		Window struct {
			Deadline time.Time `json:"deadline"`
		} `json:"window"`
	}
	json.Unmarshal([]byte(out), &st)
	if left := time.Until(st.Window.Deadline); left < 119*time.Minute || left > 121*time.Minute {
		t.Errorf("enable --ttl 7200: %s left, want 2h (status %s)", left, out)
	}
}

// regularFilesUnder lists the regular files under dir, relative, sorted.
func regularFilesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	slices.Sort(out)
	return out
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
