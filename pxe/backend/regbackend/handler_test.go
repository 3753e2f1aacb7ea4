package regbackend_test

import (
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/folder"

	"github.com/plasmactl/plasma-node/pxe/netboot"

	"github.com/plasmactl/plasma-node/answer"

	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type handlerEnv struct {
	b       *regbackend.Backend
	srv     *httptest.Server
	reg     *folder.Registrations
	inst    *folder.Installs
	state   string
	secrets string
	logs    *syncBuffer
}

func newHandlerEnv(t *testing.T, regs ...registry.Registration) *handlerEnv {
	t.Helper()
	state := t.TempDir()
	secretsDir := filepath.Join(t.TempDir(), "secrets")
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	reg, err := folder.OpenRegistrations(state, log)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range regs {
		if _, err := reg.Put(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	sec, err := folder.OpenSecrets(secretsDir)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := folder.OpenInstalls(state)
	if err != nil {
		t.Fatal(err)
	}
	b, err := regbackend.New(regbackend.Config{
		Store: reg, Secrets: sec, StateDir: state, Events: folder.OpenEvents(folder.EventsPath(state), folder.EventsOptions{}), Installs: inst, Logger: log,
		Site: func() (registry.Site, error) {
			return registry.Site{Keyboard: "de", Country: "AT", Timezone: "Europe/Vienna", Domain: "lab.example", SSHKeys: []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGzx6HqSm1mQ3VcLaZ3r0ZKtgtF5wVbUEjS0Xv5R5N5g ops@site"}}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The answer side runs as a window serves it: the netboot handler
	// asking this backend.
	h, err := netboot.New(netboot.Config{Backend: b, BaseURL: "http://192.0.2.1:8090", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); b.Close() })
	return &handlerEnv{b: b, srv: srv, reg: reg, inst: inst, state: state, secrets: secretsDir, logs: logs}
}

func (e *handlerEnv) post(t *testing.T, query, contentType string, body []byte) (int, string, http.Header) {
	t.Helper()
	resp, err := http.Post(e.srv.URL+"/answer"+query, contentType, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func sysinfo(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "answer", "testdata", "sysinfo", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func body(release string, macs ...string) []byte {
	var ifs []string
	for i, m := range macs {
		ifs = append(ifs, fmt.Sprintf(`{"link":"eth%d","mac":%q}`, i, m))
	}
	return []byte(fmt.Sprintf(`{"iso":{"release":%q},"dmi":{"system":{"serial":"SN-4711","uuid":"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"}},"network_interfaces":[%s]}`, release, strings.Join(ifs, ",")))
}

func mustReg(t *testing.T, name string, macs []string, disk string, pools ...string) registry.Registration {
	t.Helper()
	bd, err := registry.ParseBootDisk(disk)
	if err != nil {
		t.Fatal(err)
	}
	r := registry.Registration{Name: name, MACs: macs, BootDisk: bd, Created: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	for _, p := range pools {
		dp, err := registry.ParsePoolSpec(p)
		if err != nil {
			t.Fatal(err)
		}
		r.Pools = append(r.Pools, dp)
	}
	return r
}

func TestAnswerForPVE92UpperCaseMACs(t *testing.T) {
	e := newHandlerEnv(t, mustReg(t, "pve1", []string{"52:54:00:ba:5e:11"}, "25414A800205", "tanka1=single:50026B73842AD86F"))
	status, got, hdr := e.post(t, "", "application/json", sysinfo(t, "pve-9.2-synthetic.json"))
	if status != 200 {
		t.Fatalf("status %d: %s", status, got)
	}
	if ct := hdr.Get("Content-Type"); ct != netboot.ContentTypeTOML {
		t.Errorf("Content-Type = %q", ct)
	}
	a, err := answer.Decode([]byte(got), answer.Version92)
	if err != nil {
		t.Fatalf("the answer does not decode as a 9.2 answer: %v\n%s", err, got)
	}
	pw, err := os.ReadFile(filepath.Join(e.secrets, "pve1.pw"))
	if err != nil {
		t.Fatal(err)
	}
	password := strings.TrimSpace(string(pw))
	if len(password) < 24 || !answer.CheckPassword(a.Global.RootPasswordHashed, password) {
		t.Errorf("the hashed password does not match the secret file (len %d)", len(password))
	}
	// The installer's own default rounds: SHA-512 crypt's 5000, which
	// chpasswd and openssl passwd -6 write without a rounds= field.
	if h := a.Global.RootPasswordHashed; !strings.HasPrefix(h, "$6$") || strings.Contains(h, "rounds=") {
		t.Errorf("root-password-hashed %.16s…: want SHA-512 crypt with the default 5000 rounds ($6$salt$hash)", h)
	}
	if a.Global.RootPassword != "" || strings.Contains(got, password) {
		t.Error("a 9.2 answer carries the plain password")
	}
	if st, _ := os.Stat(filepath.Join(e.secrets, "pve1.pw")); st.Mode().Perm() != 0o600 {
		t.Errorf("secret mode %v", st.Mode().Perm())
	}
	want := answer.Global{Keyboard: "de", Country: "at", FQDN: answer.FQDN{Name: "pve1.lab.example"}, Mailto: "root@lab.example", Timezone: "Europe/Vienna"}
	g := a.Global
	g.RootPasswordHashed, g.RootSSHKeys = "", nil
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("global (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"ID_SERIAL": "*25414A800205*"}, a.DiskSetup.Filter); diff != "" {
		t.Errorf("boot disk filter: %s", diff)
	}
	if a.FirstBoot == nil || !strings.HasPrefix(a.FirstBoot.URL, e.srv.URL+"/first-boot/") {
		t.Fatalf("first-boot = %+v", a.FirstBoot)
	}
	// The first-boot script is served once and creates the pool.
	for i, wantStatus := range []int{200, 404} {
		resp, err := http.Get(a.FirstBoot.URL)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != wantStatus {
			t.Errorf("first-boot fetch %d: status %d", i+1, resp.StatusCode)
		}
		if i == 0 && !strings.Contains(string(b), "tanka1") {
			t.Errorf("first-boot script lacks the pool:\n%s", b)
		}
	}
	// The webhook marks the node installed, once.
	hook := a.PostInstallationWebhook.URL
	for _, wantStatus := range []int{200, 404} {
		resp, err := http.Post(hook, "application/json", strings.NewReader(`{"fqdn":"pve1.lab.example","boot-info":{"mode":"efi","secureboot":true}}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != wantStatus {
			t.Errorf("webhook: status %d, want %d", resp.StatusCode, wantStatus)
		}
	}
	inst, err := regbackend.InstalledIn(context.Background(), folder.OpenEvents(folder.EventsPath(e.state), folder.EventsOptions{}))
	if _, ok := inst["pve1"]; err != nil || !ok {
		t.Errorf("Installed = %v, %v; want pve1", inst, err)
	}
	// What the webhook said of the boot: in the event and the node's
	// status (list -o json, the page).
	nodes, err := regbackend.Status(context.Background(), e.reg, folder.OpenEvents(folder.EventsPath(e.state), folder.EventsOptions{}), nil)
	if err != nil || len(nodes) != 1 || nodes[0].State != backend.StateInstalled || nodes[0].BootMode != "efi" || nodes[0].SecureBoot == nil || !*nodes[0].SecureBoot {
		t.Errorf("status after the webhook: %+v, %v; want installed, efi, Secure Boot on", nodes, err)
	}
	if evs, _ := os.ReadFile(folder.EventsPath(e.state)); !strings.Contains(string(evs), `"secure_boot":true`) || !strings.Contains(string(evs), "installer reported success (efi, Secure Boot on)") {
		t.Errorf("the installed event does not carry Secure Boot:\n%s", evs)
	}
	// One-shot: the same machine asking again gets nothing.
	if status, got, _ := e.post(t, "", "application/json", sysinfo(t, "pve-9.2-synthetic.json")); status != 404 {
		t.Errorf("second POST: %d %s", status, got)
	}
	consumed, _ := e.reg.Consumed(context.Background())
	if len(consumed) != 1 || consumed[0].Consumed.ClientIP != "127.0.0.1" {
		t.Errorf("consumed = %+v", consumed)
	}
	// The password is nowhere but in its file.
	events, _ := os.ReadFile(folder.EventsPath(e.state))
	for what, text := range map[string]string{"log": e.logs.String(), "events": string(events)} {
		if strings.Contains(text, password) {
			t.Errorf("the password appears in the %s", what)
		}
	}
}

func TestAnswerForPVE82TruncatedContentType(t *testing.T) {
	e := newHandlerEnv(t, mustReg(t, "old", nil, "sda", "tank=mirror:sdb,sdc"))
	status, got, _ := e.post(t, "", "application/json; charset=utf-", sysinfo(t, "pve-8.2-2.json"))
	if status != 200 {
		t.Fatalf("status %d: %s", status, got)
	}
	a, err := answer.Decode([]byte(got), answer.Version82)
	if err != nil {
		t.Fatalf("not an 8.2 answer: %v\n%s", err, got)
	}
	pw, _ := os.ReadFile(filepath.Join(e.secrets, "old.pw"))
	if a.Global.RootPassword != strings.TrimSpace(string(pw)) || a.Global.RootPasswordHashed != "" {
		t.Error("an 8.2 answer must carry the plain password and no hash")
	}
	if a.FirstBoot != nil || a.PostInstallationWebhook != nil {
		t.Error("an 8.2 answer has no first-boot or webhook section")
	}
	if diff := cmp.Diff([]string{"sda"}, a.DiskSetup.DiskList); diff != "" {
		t.Error(diff)
	}
	if !strings.Contains(got, "tank=mirror:sdb+sdc") || !strings.Contains(got, "NOT created") {
		t.Errorf("the 8.2 answer does not note the data pools:\n%s", got)
	}
}

func TestAnswerRefusals(t *testing.T) {
	tests := map[string]struct {
		regs        []registry.Registration
		method      string
		query       string
		body        []byte
		wantStatus  int
		wantBody    string
		stayPending bool
	}{
		"an unregistered machine gets 404": {
			regs: []registry.Registration{{Name: "a", MACs: []string{"aa:bb:cc:dd:ee:01"}}}, body: body("9.2", "AA:BB:CC:DD:EE:99"),
			wantStatus: 404, wantBody: "no pending registration matches this machine", stayPending: true,
		},
		"a pinned registration never answers another machine": {
			regs: []registry.Registration{{Name: "a", MACs: []string{"aa:bb:cc:dd:ee:01"}}}, body: body("9.2"),
			wantStatus: 404, stayPending: true,
		},
		"a body that is not an object gets 400": {
			regs: []registry.Registration{{Name: "a"}}, body: []byte(`["not","an","object"]`), wantStatus: 400, wantBody: "invalid system-info JSON", stayPending: true,
		},
		"a body over 1 MiB gets 413": {
			regs: []registry.Registration{{Name: "a"}}, body: append([]byte(`{"x":"`), append(bytes.Repeat([]byte("a"), netboot.MaxBodySize), '"', '}')...),
			wantStatus: 413, wantBody: "over 1048576 bytes", stayPending: true,
		},
		"GET gets 405": {
			regs: []registry.Registration{{Name: "a"}}, method: "GET", wantStatus: 405, stayPending: true,
		},
		"a console-chosen disk without bootdisk gets 409 and stays pending": {
			regs: []registry.Registration{{Name: "a", BootDisk: answer.BootDisk{Kind: answer.BootDiskAsk}}}, body: body("9.2"),
			wantStatus: 409, wantBody: "console-chosen boot disk", stayPending: true,
		},
		"a malformed bootdisk gets 400": {
			regs: []registry.Registration{{Name: "a", BootDisk: answer.BootDisk{Kind: answer.BootDiskAsk}}}, query: "?bootdisk=../sda", body: body("9.2"),
			wantStatus: 400, wantBody: "invalid bootdisk parameter", stayPending: true,
		},
		"a console-chosen disk with bootdisk is answered": {
			regs: []registry.Registration{{Name: "a", BootDisk: answer.BootDisk{Kind: answer.BootDiskAsk}}}, query: "?bootdisk=nvme1n1", body: body("9.2"),
			wantStatus: 200, wantBody: `disk-list = ['nvme1n1']`,
		},
		"a console-chosen disk of a data pool gets 409 and stays pending": {
			regs: []registry.Registration{{Name: "a", BootDisk: answer.BootDisk{Kind: answer.BootDiskAsk},
				Pools: []registry.DataPool{{Name: "tank", Layout: registry.LayoutMirror, Disks: []string{"S4EWNX0N123456", "WD-WCC4E1234567"}}}}},
			query: "?bootdisk=WD-WCC4E1234567", body: body("9.2"),
			wantStatus: 409, wantBody: "pool tank", stayPending: true,
		},
		"a console-chosen serial whose filter matches a data pool disk gets 409 and stays pending": {
			regs: []registry.Registration{{Name: "a", BootDisk: answer.BootDisk{Kind: answer.BootDiskAsk},
				Pools: []registry.DataPool{{Name: "tank", Layout: registry.LayoutSingle, Disks: []string{"S4EWNX0N123456"}}}}},
			query: "?bootdisk=S4EWNX", body: body("9.2"),
			wantStatus: 409, wantBody: "would also match disk", stayPending: true,
		},
		"a discovered machine that lost a NIC since its discovery gets 409 and stays pending": {
			regs:       []registry.Registration{{Name: "a", MACs: []string{"aa:bb:cc:dd:ee:01", "aa:bb:cc:dd:ee:02"}, Serial: "SN-4711", FromDiscovery: true}},
			body:       body("9.2", "AA:BB:CC:DD:EE:01"),
			wantStatus: 409, wantBody: "the machine changed since its discovery: its NICs are aa:bb:cc:dd:ee:01, discovered aa:bb:cc:dd:ee:01 aa:bb:cc:dd:ee:02", stayPending: true,
		},
		"a discovered machine with a NIC more than at its discovery gets 409 and stays pending": {
			regs:       []registry.Registration{{Name: "a", MACs: []string{"aa:bb:cc:dd:ee:01"}, Serial: "SN-4711", FromDiscovery: true}},
			body:       body("9.2", "AA:BB:CC:DD:EE:01", "AA:BB:CC:DD:EE:03"),
			wantStatus: 409, wantBody: "its NICs are aa:bb:cc:dd:ee:01 aa:bb:cc:dd:ee:03, discovered aa:bb:cc:dd:ee:01", stayPending: true,
		},
		"a discovered machine whose DMI serial changed gets 409 and stays pending": {
			regs:       []registry.Registration{{Name: "a", MACs: []string{"aa:bb:cc:dd:ee:01"}, Serial: "SN-0815", FromDiscovery: true}},
			body:       body("9.2", "AA:BB:CC:DD:EE:01"),
			wantStatus: 409, wantBody: "its DMI serial is SN-4711, discovered SN-0815", stayPending: true,
		},
		"a discovered machine as it was discovered is answered": {
			regs:       []registry.Registration{{Name: "a", MACs: []string{"aa:bb:cc:dd:ee:01", "aa:bb:cc:dd:ee:02"}, Serial: "sn-4711", FromDiscovery: true}},
			body:       body("9.2", "AA:BB:CC:DD:EE:02", "AA:BB:CC:DD:EE:01"),
			wantStatus: 200, wantBody: "[global]",
		},
		"a hand-made registration pinning one NIC of two is answered": {
			regs:       []registry.Registration{{Name: "a", MACs: []string{"aa:bb:cc:dd:ee:01"}, Serial: "SN-0815"}},
			body:       body("9.2", "AA:BB:CC:DD:EE:01", "AA:BB:CC:DD:EE:03"),
			wantStatus: 200, wantBody: "[global]",
		},
		"an unsupported installer gets 400": {
			regs: []registry.Registration{{Name: "a"}}, body: body("7.4"), wantStatus: 400, wantBody: "not supported", stayPending: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			for i := range tc.regs {
				if tc.regs[i].BootDisk == (answer.BootDisk{}) && !strings.Contains(name, "console") {
					tc.regs[i].BootDisk = answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}
				}
			}
			e := newHandlerEnv(t, tc.regs...)
			method := tc.method
			if method == "" {
				method = "POST"
			}
			req, _ := http.NewRequest(method, e.srv.URL+"/answer"+tc.query, bytes.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.wantStatus || !strings.Contains(string(b), tc.wantBody) {
				t.Errorf("got %d %q, want %d containing %q", resp.StatusCode, b, tc.wantStatus, tc.wantBody)
			}
			pending, _ := e.reg.Pending(context.Background())
			if tc.stayPending != (len(pending) == len(tc.regs)) {
				t.Errorf("pending after the request: %d of %d", len(pending), len(tc.regs))
			}
			evs, err := folder.ReadEventsFile(folder.EventsPath(e.state))
			if err != nil || len(evs) != 1 || evs[0].Status != tc.wantStatus {
				t.Errorf("event log = %+v, %v; want one event with status %d", evs, err, tc.wantStatus)
			}
		})
	}
}

func TestOneAnswerUnderConcurrentPosts(t *testing.T) {
	e := newHandlerEnv(t, mustReg(t, "race", []string{"aa:bb:cc:dd:ee:01"}, "sda"))
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[int]int{}
	for range 100 {
		wg.Go(func() {
			// A fresh transport per request: distinct client connections.
			c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			resp, err := c.Post(e.srv.URL+"/answer", "application/json", bytes.NewReader(body("9.2", "AA:BB:CC:DD:EE:01")))
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mu.Lock()
			counts[resp.StatusCode]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if diff := cmp.Diff(map[int]int{200: 1, 404: 99}, counts); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	ents, _ := os.ReadDir(e.secrets)
	if len(ents) != 1 {
		t.Errorf("%d secret files, want 1", len(ents))
	}
	consumed, _ := e.reg.Consumed(context.Background())
	if len(consumed) != 1 {
		t.Errorf("%d consumed registrations, want 1", len(consumed))
	}
}

func TestStatusShowsEachState(t *testing.T) {
	e := newHandlerEnv(t, mustReg(t, "a", []string{"aa:bb:cc:dd:ee:01"}, "sda"), mustReg(t, "b", []string{"aa:bb:cc:dd:ee:02"}, "sdb", "tank=single:sdc"))
	if status, _, _ := e.post(t, "", "application/json", body("9.2", "aa:bb:cc:dd:ee:01")); status != 200 {
		t.Fatal(status)
	}
	resp, err := http.Get(e.srv.URL + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct{ Nodes []backend.Node }
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, n := range got.Nodes {
		states = append(states, n.Name+"="+n.State)
	}
	if diff := cmp.Diff([]string{"b=pending", "a=consumed"}, states); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
}
