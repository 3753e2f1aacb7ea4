package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	// The window follows the log from the moment its follower starts,
	// which a loaded machine may reach after a first append: the other
	// process records an action each second until the page has one.
	next := time.Now()
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(next) {
			if err := other.Append(context.Background(), events.Event{Kind: events.BMC, Node: "pve1", Status: 200, Detail: "power on: done (redfish)"}); err != nil {
				t.Fatal(err)
			}
			next = time.Now().Add(time.Second)
		}
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
	// Without an SSH key the window warns as it starts, then fails.
	if err := os.Remove(filepath.Join(e.home, ".ssh", "id_ed25519.pub")); err != nil {
		t.Fatal(err)
	}
	code, out = e.npExit(t, "enable", "--http", ln.Addr().String(), "--ttl", "5m")
	if code != 1 || !strings.Contains(out, "cannot listen") {
		t.Errorf("enable on a taken port: exit %d\n%s\nwant 1 with the window's reason", code, out)
	}
	// Its warnings stay on their own lines, apart from the error.
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.Contains(l, "warning") && !strings.HasPrefix(l, "node-provisioner: warning: ") || strings.Contains(l, "cannot listen") && strings.Contains(l, "warning") {
			t.Errorf("enable on a taken port: line %q glues a warning to other text:\n%s", l, out)
		}
	}
}
