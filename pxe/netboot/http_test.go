package netboot

import (
	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	"github.com/plasmactl/plasma-node/pxe/bootassets"
	"github.com/plasmactl/plasma-node/pxe/store/folder"

	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registry"

	"bytes"
	"context"
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

	"github.com/plasmactl/plasma-node/answer"
)

type bootEnv struct {
	h     *Handler
	srv   *httptest.Server
	reg   *folder.Registrations
	state string
	logs  *logBuffer
}

type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *logBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *logBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var testKernel = []byte("kernel bytes: 0123456789abcdefghijklmnopqrstuvwxyz")

// stage writes a release's kernel and initrd under state/assets/.
func stageRelease(t testing.TB, state, release string) {
	t.Helper()
	dir := filepath.Join(state, "assets", release)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{bootassets.AssetKernel: testKernel, bootassets.AssetNetbootInitrd: []byte("initrd bytes")} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func testReg(t *testing.T, name, disk string, macs ...string) registry.Registration {
	t.Helper()
	bd, err := registry.ParseBootDisk(disk)
	if err != nil {
		t.Fatal(err)
	}
	return registry.Registration{Name: name, MACs: macs, BootDisk: bd, Created: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// newBootEnv opens a state folder with release 9.1-1 staged, the
// registrations put, and a handler (cfg's Backend, AssetsDir, Logger and,
// when empty, BaseURL filled in) behind a test server.
func newBootEnv(t *testing.T, cfg Config, regs ...registry.Registration) *bootEnv {
	t.Helper()
	state := t.TempDir()
	logs := &logBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	r, err := folder.OpenRegistrations(state, log)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range regs {
		if _, err := r.Put(context.Background(), x); err != nil {
			t.Fatal(err)
		}
	}
	stageRelease(t, state, "9.1-1")
	cfg.Backend, cfg.AssetsDir, cfg.Logger = testBackend(t, state, r, log), filepath.Join(state, "assets"), log
	if cfg.BaseURL == "" {
		cfg.BaseURL = testBase
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &bootEnv{h: h, srv: srv, reg: r, state: state, logs: logs}
}

// testBackend is node-provisioner's backend over the registrations r of
// the state folder.
func testBackend(t testing.TB, state string, r *folder.Registrations, log *slog.Logger) *regbackend.Backend {
	t.Helper()
	sec, err := folder.OpenSecrets(filepath.Join(t.TempDir(), "secrets"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := regbackend.New(regbackend.Config{Store: r, Secrets: sec, StateDir: state, Events: folder.OpenEvents(folder.EventsPath(state), folder.EventsOptions{}), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func (e *bootEnv) get(t *testing.T, path string, header ...string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func (e *bootEnv) consume(t *testing.T, name string, macs ...string) {
	t.Helper()
	_, err := e.reg.Consume(context.Background(), name, registry.ConsumeRecord{
		Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), ClientIP: "10.77.0.120", MACs: macs,
	})
	if err != nil {
		t.Fatal(err)
	}
}

const (
	testMAC1 = "52:54:00:77:00:10"
	testMAC2 = "52:54:00:77:00:20"
)

func TestBootScriptRoute(t *testing.T) {
	tests := map[string]struct {
		regs    []registry.Registration
		consume map[string][]string // name → MACs the installer posted
		repend  []registry.Registration
		query   string
		golden  string // compared with testdata/http/<golden>
		want    string // else the script must contain this
	}{
		"a pending pinned MAC gets the BIOS installer": {
			regs: []registry.Registration{testReg(t, "pve1", "sda", testMAC1)}, query: "?mac=" + testMAC1 + "&platform=pcbios", golden: "install-bios.ipxe",
		},
		"a pending pinned MAC gets the UEFI installer": {
			regs: []registry.Registration{testReg(t, "pve1", "sda", testMAC1)}, query: "?mac=52-54-00-77-00-10&platform=efi", golden: "install-efi.ipxe",
		},
		"without a platform the script branches": {
			regs: []registry.Registration{testReg(t, "pve1", "sda", testMAC1)}, query: "?mac=" + strings.ToUpper(testMAC1) + "&platform=arm", golden: "install-any.ipxe",
		},
		"a consumed node's MAC exits": {
			regs: []registry.Registration{testReg(t, "pve1", "sda", testMAC1)}, consume: map[string][]string{"pve1": {testMAC1}},
			query: "?mac=" + testMAC1, golden: "exit-consumed.ipxe",
		},
		"an unknown MAC exits": {
			regs: []registry.Registration{testReg(t, "pve1", "sda", testMAC1)}, query: "?mac=52:54:00:77:00:99", golden: "exit-unknown.ipxe",
		},
		"the only unpinned registration is installed on any MAC": {
			regs: []registry.Registration{testReg(t, "pve1", "sda")}, query: "?mac=" + testMAC1 + "&platform=pcbios", golden: "install-bios.ipxe",
		},
		"an installed unpinned node is not taken for the next unpinned registration": {
			regs: []registry.Registration{testReg(t, "pve1", "sda")}, consume: map[string][]string{"pve1": {testMAC1}},
			repend: []registry.Registration{testReg(t, "pve2", "sda")},
			query:  "?mac=" + testMAC1, golden: "exit-consumed.ipxe",
		},
		"a consumed node registered again is installed again": {
			regs: []registry.Registration{testReg(t, "pve1", "sda", testMAC1)}, consume: map[string][]string{"pve1": {testMAC1}},
			repend: []registry.Registration{testReg(t, "pve1", "sda")},
			query:  "?mac=" + testMAC1 + "&platform=pcbios", golden: "install-bios.ipxe",
		},
		"two unpinned registrations install nothing": {
			regs: []registry.Registration{testReg(t, "pve1", "sda"), testReg(t, "pve2", "sda")}, query: "?mac=" + testMAC1, golden: "exit-unknown-10.ipxe",
		},
		"a boot disk left to the console adds the ask flag": {
			regs: []registry.Registration{testReg(t, "pve1", "ask", testMAC1)}, query: "?mac=" + testMAC1, want: "proxmox-start-auto-installer " + bootassets.AskDiskKernelArg + "\n",
		},
		"a request without mac is asked again with it": {
			regs: []registry.Registration{testReg(t, "pve1", "sda", testMAC1)}, query: "", golden: "rechain.ipxe",
		},
		"an unparsable MAC exits": {
			regs: []registry.Registration{testReg(t, "pve1", "sda")}, query: "?mac=%0Achain%20http://evil/", want: "the mac parameter is not a MAC address",
		},
		"an empty mac exits instead of asking again": {
			regs: []registry.Registration{testReg(t, "pve1", "sda")}, query: "?mac=", want: "\nexit\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newBootEnv(t, Config{}, tc.regs...)
			for n, macs := range tc.consume {
				e.consume(t, n, macs...)
			}
			for _, r := range tc.repend {
				if _, err := e.reg.Put(context.Background(), r); err != nil {
					t.Fatal(err)
				}
			}
			code, body, hdr := e.get(t, "/boot.ipxe"+tc.query)
			if code != http.StatusOK {
				t.Fatalf("status = %d, want 200; body %q", code, body)
			}
			if got := hdr.Get("Cache-Control"); got != "no-store" {
				t.Errorf("Cache-Control = %q, want no-store", got)
			}
			if tc.golden != "" {
				goldenHTTP(t, tc.golden, body)
			} else if !strings.Contains(body, tc.want) {
				t.Errorf("script lacks %q:\n%s", tc.want, body)
			}
			if strings.Contains(body, "evil") {
				t.Errorf("script holds client text:\n%s", body)
			}
		})
	}
}

func TestBootScriptRecordsTimelineAndMetrics(t *testing.T) {
	e := newBootEnv(t, Config{}, testReg(t, "pve1", "sda", testMAC1))
	e.get(t, "/boot.ipxe?mac="+testMAC1)
	e.get(t, "/boot.ipxe?mac="+testMAC2)
	e.get(t, "/boot.ipxe")
	got := e.h.Timeline().For("pve1")
	if len(got) != 1 || got[0].Stage != events.Script || got[0].MAC != testMAC1 || !strings.Contains(got[0].Detail, "install release 9.1-1 (matched by mac)") {
		t.Errorf("pve1 timeline = %+v, want one script event for %s", got, testMAC1)
	}
	if got := e.h.Timeline().For(testMAC2); len(got) != 1 || got[0].Node != "" || !strings.HasPrefix(got[0].Detail, "exit: no pending registration") {
		t.Errorf("%s timeline = %+v, want one exit event", testMAC2, got)
	}
	m := e.h.Metrics()
	if i, x, r := m.scriptsInstall.Load(), m.scriptsExit.Load(), m.scriptsRechain.Load(); i != 1 || x != 1 || r != 1 {
		t.Errorf("scripts install/exit/rechain = %d/%d/%d, want 1/1/1", i, x, r)
	}
	if !strings.Contains(e.logs.String(), "boot script: install") {
		t.Errorf("log lacks the decision:\n%s", e.logs)
	}
}

func TestBootScriptExitsWhenNoReleaseCanBeChosen(t *testing.T) {
	tests := map[string]struct {
		release string
		extra   []string // more releases to stage
		remove  bool     // remove the staged assets
		want    string
	}{
		"no assets at all":           {remove: true, want: "no boot release staged (run prepare)"},
		"a named release is missing": {release: "8.4-1", want: "release 8.4-1 lacks linux26 or initrd"},
		"two releases staged":        {extra: []string{"9.0-1"}, want: "2 releases are staged (9.0-1, 9.1-1); choose one"},
		"a named release of several": {release: "9.0-1", extra: []string{"9.0-1"}, want: "kernel http://10.77.0.2:8090/assets/9.0-1/linux26"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newBootEnv(t, Config{Release: tc.release}, testReg(t, "pve1", "sda", testMAC1))
			for _, r := range tc.extra {
				stageRelease(t, e.state, r)
			}
			if tc.remove {
				os.RemoveAll(filepath.Join(e.state, "assets"))
			}
			_, body, _ := e.get(t, "/boot.ipxe?mac="+testMAC1)
			if !strings.Contains(body, tc.want) {
				t.Errorf("script lacks %q:\n%s", tc.want, body)
			}
		})
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	state := t.TempDir()
	r, err := folder.OpenRegistrations(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		cfg  Config
		want string
	}{
		"no backend":                      {Config{BaseURL: testBase}, "a backend is required"},
		"no base URL":                     {Config{Backend: testBackend(t, state, r, nil)}, `base URL ""`},
		"a base URL with next-server":     {Config{Backend: testBackend(t, state, r, nil), AssetsDir: filepath.Join(state, "assets"), BaseURL: "http://${next-server}:8090"}, "concrete URL"},
		"an unspecified address":          {Config{Backend: testBackend(t, state, r, nil), AssetsDir: filepath.Join(state, "assets"), BaseURL: "http://0.0.0.0:8090"}, "names no address"},
		"a tftp URL":                      {Config{Backend: testBackend(t, state, r, nil), AssetsDir: filepath.Join(state, "assets"), BaseURL: "tftp://10.0.0.2"}, "want the concrete URL"},
		"a link-local IPv6 address":       {Config{Backend: testBackend(t, state, r, nil), BaseURL: "http://[fe80::2]:8090"}, `base URL "http://[fe80::2]:8090": fe80::2 is a link-local address (want an address a machine reaches from its own link`},
		"a link-local address and zone":   {Config{Backend: testBackend(t, state, r, nil), BaseURL: "http://[fe80::2%25eth0]:8090"}, "fe80::2%eth0 is a link-local address"},
		"a release with a slash":          {Config{Backend: testBackend(t, state, r, nil), AssetsDir: filepath.Join(state, "assets"), BaseURL: testBase, Release: "../x"}, `release "../x"`},
		"a kernel argument with a space":  {Config{Backend: testBackend(t, state, r, nil), AssetsDir: filepath.Join(state, "assets"), BaseURL: testBase, ExtraKernelArgs: []string{"a b"}}, `kernel argument "a b"`},
		"a kernel argument with a return": {Config{Backend: testBackend(t, state, r, nil), AssetsDir: filepath.Join(state, "assets"), BaseURL: testBase, ExtraKernelArgs: []string{"quiet\nshell"}}, "kernel argument"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	h, err := New(Config{Backend: testBackend(t, state, r, nil), AssetsDir: filepath.Join(state, "assets"), BaseURL: testBase + "/", ExtraKernelArgs: []string{"console=ttyS0,115200"}})
	if err != nil {
		t.Fatalf("a good config: %v", err)
	}
	if h.cfg.BaseURL != testBase {
		t.Errorf("base URL = %q, want the trailing slash trimmed", h.cfg.BaseURL)
	}
}

func newRegistryTB(tb testing.TB, state string) (*folder.Registrations, error) {
	tb.Helper()
	return folder.OpenRegistrations(state, nil)
}

func FuzzBootScriptQuery(f *testing.F) {
	for _, s := range []string{"mac=" + testMAC1, "mac=" + testMAC1 + "&platform=efi", "mac=%0Achain%20x", "", "mac=&platform=${x}", "mac=52-54-00-77-00-10&platform=pcbios%0Ashell"} {
		f.Add(s)
	}
	state := f.TempDir()
	stageRelease(f, state, "9.1-1")
	r, err := newRegistryTB(f, state)
	if err != nil {
		f.Fatal(err)
	}
	if _, err := r.Put(context.Background(), registry.Registration{Name: "pve1", MACs: []string{testMAC1}, BootDisk: answer.BootDisk{Kind: answer.BootDiskAny}}); err != nil {
		f.Fatal(err)
	}
	h, err := New(Config{Backend: testBackend(f, state, r, nil), AssetsDir: filepath.Join(state, "assets"), BaseURL: testBase})
	if err != nil {
		f.Fatal(err)
	}
	allowed := []string{"#", "echo ", "kernel http://10.77.0.2:8090/assets/9.1-1/linux26?mac=", "initrd --name initrd http://10.77.0.2:8090/assets/9.1-1/initrd-netboot.img?mac=",
		"boot", "exit", "iseq ${platform} efi ", "goto ", ":", "chain http://10.77.0.2:8090/boot.ipxe?mac="}
	f.Fuzz(func(t *testing.T, query string) {
		req := httptest.NewRequest(http.MethodGet, "/boot.ipxe", nil)
		req.URL.RawQuery = query
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Fatalf("status %d for %q", w.Code, query)
		}
		lines := strings.Split(strings.TrimSuffix(w.Body.String(), "\n"), "\n")
		if lines[0] != "#!ipxe" {
			t.Fatalf("script for %q starts %q", query, lines[0])
		}
		for _, l := range lines[1:] {
			ok := false
			for _, p := range allowed {
				ok = ok || strings.HasPrefix(l, p)
			}
			if !ok {
				t.Fatalf("script for %q has line %q", query, l)
			}
		}
	})
}
