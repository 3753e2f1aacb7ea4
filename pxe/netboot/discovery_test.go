package netboot

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

const testDiscoveryToken = "0123456789abcdef0123456789abcdef-window"

// newDiscoveryEnv is a boot env of a discovery window whose inbox holds
// at most max machines, with the discovery initrd staged.
func newDiscoveryEnv(t *testing.T, max int) (*bootEnv, discovery.Store) {
	t.Helper()
	dir := t.TempDir()
	inbox, err := folder.OpenInbox(dir, discovery.Limits{Max: max})
	if err != nil {
		t.Fatal(err)
	}
	e := newBootEnv(t, Config{Discovery: &Discovery{Token: testDiscoveryToken, Inbox: inbox}},
		testReg(t, "pinned", "sda", testMAC1))
	if err := os.WriteFile(filepath.Join(e.state, "assets", "9.1-1", discovery.InitrdName), []byte("agent"), 0o644); err != nil {
		t.Fatal(err)
	}
	return e, inbox
}

func (e *bootEnv) post(t testing.TB, path, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func reportJSON(mac, serial string) string {
	return fmt.Sprintf(`{"nics":[{"mac":%q,"link":"up"}],"dmi":{"serial":%q},"disks":[{"name":"nvme0n1","size_bytes":4294967296,"serial":"NV-1","transport":"nvme"}]}`, mac, serial)
}

// TestADiscoveryWindowBootsStrangersIntoDiscovery: a stranger's script
// boots the release's kernel with the discovery initrd, the post URL and
// the token, and BOOTIF naming the NIC iPXE booted from (netX, the
// device it opened last), so the agent reports that NIC as boot_mac even
// when another NIC takes its DHCP lease; a registered machine still installs; without the discovery
// initrd the stranger exits, saying why.
func TestADiscoveryWindowBootsStrangersIntoDiscovery(t *testing.T) {
	e, _ := newDiscoveryEnv(t, 10)
	_, script, _ := e.get(t, "/boot.ipxe?mac=52:54:00:99:00:01&platform=efi")
	for _, want := range []string{
		"kernel " + testBase + "/assets/9.1-1/linux26?mac=52:54:00:99:00:01 " + discovery.ArgURL + "=" + testBase + "/discovery " + discovery.ArgToken + "=" + testDiscoveryToken + " quiet BOOTIF=01-${netX/mac:hexhyp} initrd=initrd",
		"initrd --name initrd " + testBase + "/assets/9.1-1/" + discovery.InitrdName + "?mac=52:54:00:99:00:01",
		"boot",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("a stranger's script lacks %q:\n%s", want, script)
		}
	}
	if strings.Contains(script, "proxmox-start-auto-installer") {
		t.Errorf("a stranger's script starts the installer:\n%s", script)
	}
	_, script, _ = e.get(t, "/boot.ipxe?mac="+testMAC1+"&platform=efi")
	if !strings.Contains(script, "installing Proxmox VE on pinned") {
		t.Errorf("a registered machine in a discovery window:\n%s", script)
	}
	e.consume(t, "pinned", testMAC1)
	_, script, _ = e.get(t, "/boot.ipxe?mac="+testMAC1+"&platform=efi")
	if !strings.Contains(script, "\nexit\n") || strings.Contains(script, discovery.InitrdName) {
		t.Errorf("an installed machine in a discovery window does not exit:\n%s", script)
	}
	os.Remove(filepath.Join(e.state, "assets", "9.1-1", discovery.InitrdName))
	_, script, _ = e.get(t, "/boot.ipxe?mac=52:54:00:99:00:01&platform=efi")
	if !strings.Contains(script, "lacks "+discovery.InitrdName) || !strings.Contains(script, "\nexit\n") {
		t.Errorf("without the discovery initrd a stranger's script:\n%s", script)
	}
}

func TestAWindowWithoutDiscoveryLetsStrangersExit(t *testing.T) {
	e := newBootEnv(t, Config{})
	_, script, _ := e.get(t, "/boot.ipxe?mac=52:54:00:99:00:01&platform=efi")
	if !strings.Contains(script, "\nexit\n") {
		t.Errorf("a stranger's script:\n%s", script)
	}
	if status, _ := e.post(t, discovery.PostPath, testDiscoveryToken, reportJSON("52:54:00:99:00:01", "S")); status != http.StatusNotFound {
		t.Errorf("a report to a window without discovery: %d, want 404", status)
	}
}

// TestDiscoveryPosts: the report with the window's token is kept; a post
// without it, with another, or with a body that is not a report is
// refused, keeps nothing and is a refusal event.
func TestDiscoveryPosts(t *testing.T) {
	cases := map[string]struct {
		token, body string
		status      int
		kept        bool
	}{
		"a report with the window's token is kept": {testDiscoveryToken, reportJSON("52:54:00:99:00:01", "S1"), 200, true},
		"a report without a token is refused":      {"", reportJSON("52:54:00:99:00:01", "S1"), 401, false},
		"a report with another token is refused":   {strings.Repeat("x", len(testDiscoveryToken)), reportJSON("52:54:00:99:00:01", "S1"), 401, false},
		"a token's prefix is refused":              {testDiscoveryToken[:32], reportJSON("52:54:00:99:00:01", "S1"), 401, false},
		"a body over 64 KiB is refused":            {testDiscoveryToken, `{"nics":[],"x":"` + strings.Repeat("a", 70<<10) + `"}`, 413, false},
		"a body that is not a report is refused":   {testDiscoveryToken, `{"nics":[{"mac":"nope"}]}`, 400, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e, inbox := newDiscoveryEnv(t, 10)
			status, msg := e.post(t, discovery.PostPath, tc.token, tc.body)
			if status != tc.status {
				t.Errorf("status %d (%s), want %d", status, msg, tc.status)
			}
			recs, err := inbox.List(context.Background(), e.h.cfg.Now())
			if err != nil {
				t.Fatal(err)
			}
			if (len(recs) == 1) != tc.kept {
				t.Errorf("inbox holds %d, kept = %v", len(recs), tc.kept)
			}
			want := events.Refused
			if tc.kept {
				want = events.Discovered
			}
			evs, err := folder.OpenEvents(folder.EventsPath(e.state), folder.EventsOptions{}).Read(context.Background(), "", 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) == 0 || evs[len(evs)-1].Event.Kind != want {
				t.Errorf("events %+v, want the last one %s", evs, want)
			}
			if strings.Contains(fmt.Sprint(evs), testDiscoveryToken) {
				t.Error("an event holds the token")
			}
		})
	}
}

// TestAFloodOfFakeMACsKeepsTheInboxWithinItsBound posts 5 000 machines of
// fake MACs, with the window's token, into an inbox of 50: 50 are kept,
// the rest refused with 503.
func TestAFloodOfFakeMACsKeepsTheInboxWithinItsBound(t *testing.T) {
	const flood, max = 5000, 50
	e, inbox := newDiscoveryEnv(t, max)
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	sem := make(chan struct{}, 16)
	for i := range flood {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			mac := fmt.Sprintf("02:00:00:%02x:%02x:%02x", i>>16&0xff, i>>8&0xff, i&0xff)
			status, _ := e.post(t, discovery.PostPath, testDiscoveryToken, reportJSON(mac, fmt.Sprint("FLOOD-", i)))
			mu.Lock()
			statuses[status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if statuses[200] != max || statuses[503] != flood-max {
		t.Errorf("statuses %v, want %d × 200 and %d × 503", statuses, max, flood-max)
	}
	recs, err := inbox.List(context.Background(), e.h.cfg.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != max {
		t.Errorf("the inbox holds %d, want %d", len(recs), max)
	}
}

// TestThePageCountsDiscoveredMachinesOnly: the page and GET /status say
// how many machines were discovered, and not their serials or disks
// (the timeline shows a stranger's boot steps by MAC, as before).
func TestThePageCountsDiscoveredMachinesOnly(t *testing.T) {
	e, _ := newDiscoveryEnv(t, 10)
	for i, mac := range []string{"52:54:00:99:00:01", "52:54:00:99:00:02"} {
		if status, msg := e.post(t, discovery.PostPath, testDiscoveryToken, reportJSON(mac, fmt.Sprint("SECRET-SERIAL-", i))); status != 200 {
			t.Fatalf("post: %d %s", status, msg)
		}
	}
	_, page, _ := e.get(t, "/")
	_, status, _ := e.get(t, "/status")
	if !strings.Contains(page, `<span data-count="discovered">2 discovered</span>`) || !strings.Contains(status, `"discovered": 2`) {
		t.Errorf("the count is missing:\n%s\n%s", page, status)
	}
	for _, secret := range []string{"SECRET-SERIAL", "NV-1"} {
		if strings.Contains(page, secret) || strings.Contains(status, secret) {
			t.Errorf("the page or status shows %q of a discovered machine", secret)
		}
	}
}

// TestAKeptReportIsEnrolledAndCounted: the window hands each kept report
// to the enrolment hook, counts its outcome by rule on /metrics, and
// answers the post whatever the hook says; a refused report reaches no
// hook.
func TestAKeptReportIsEnrolledAndCounted(t *testing.T) {
	e, _ := newDiscoveryEnv(t, 10)
	var got []string
	e.h.cfg.Discovery.Enrol = func(_ context.Context, rec discovery.Record) Enrolment {
		got = append(got, rec.ID)
		if rec.DMI.Serial == "S1" {
			return Enrolment{Outcome: EnrolEnrolled, Rule: "ssd-boot", Node: "pve-01"}
		}
		return Enrolment{Outcome: EnrolNoRule, Reason: "disk size 4 GB below 200 GB of rule ssd-boot"}
	}
	for _, p := range []struct{ token, body string }{
		{testDiscoveryToken, reportJSON("52:54:00:99:00:01", "S1")},
		{testDiscoveryToken, reportJSON("52:54:00:99:00:02", "S2")},
		{"", reportJSON("52:54:00:99:00:03", "S3")},
	} {
		e.post(t, discovery.PostPath, p.token, p.body)
	}
	if strings.Join(got, " ") != "52:54:00:99:00:01 52:54:00:99:00:02" {
		t.Errorf("enrolled %v, want the two kept reports", got)
	}
	var m strings.Builder
	e.h.Metrics().WriteTo(&m)
	for _, l := range []string{`plasma_pxe_enrolments_total{rule="ssd-boot",outcome="enrolled"} 1`, `plasma_pxe_enrolments_total{rule="",outcome="no_rule"} 1`} {
		if !strings.Contains(m.String(), l) {
			t.Errorf("/metrics lacks %s:\n%s", l, m.String())
		}
	}
}

// TestAnInstallModeEnrolmentRepliesInstall: the post of a machine an
// install-mode rule enrolled is answered "install", so that its agent
// reboots it into the install; every other kept report is answered "ok"
// (the agent powers the machine off).
func TestAnInstallModeEnrolmentRepliesInstall(t *testing.T) {
	e, _ := newDiscoveryEnv(t, 10)
	e.h.cfg.Discovery.Enrol = func(_ context.Context, rec discovery.Record) Enrolment {
		switch rec.DMI.Serial {
		case "S1":
			return Enrolment{Outcome: EnrolEnrolled, Rule: "a", Node: "pve-01", Install: true}
		case "S2":
			return Enrolment{Outcome: EnrolEnrolled, Rule: "b", Node: "pve-02"}
		}
		return Enrolment{Outcome: EnrolNoRule, Reason: "no rule matches"}
	}
	tests := map[string]struct{ mac, serial, want string }{
		"an install-mode enrolment is told to install": {"52:54:00:99:01:01", "S1", discovery.ReplyInstall + "\n"},
		"a register-mode enrolment is told ok":         {"52:54:00:99:01:02", "S2", discovery.ReplyKept + "\n"},
		"a machine no rule took is told ok":            {"52:54:00:99:01:03", "S3", discovery.ReplyKept + "\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			status, body := e.post(t, discovery.PostPath, testDiscoveryToken, reportJSON(tc.mac, tc.serial))
			if status != http.StatusOK || body != tc.want {
				t.Errorf("post = %d %q, want 200 %q", status, body, tc.want)
			}
		})
	}
}
