package netboot

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/pxe/events"
)

// outsideSecret is what a file outside the assets folder holds; no request may
// get it.
const outsideSecret = "SECRET registration content"

func writeOutside(t testing.TB, state string) {
	t.Helper()
	dir := filepath.Join(state, "registrations")
	os.MkdirAll(dir, 0o700)
	if err := os.WriteFile(filepath.Join(dir, "x.json"), []byte(outsideSecret), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "outside"), []byte(outsideSecret), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestAssetsServeFilesWithRanges(t *testing.T) {
	e := newBootEnv(t, Config{})
	tests := map[string]struct {
		path, rng  string
		wantStatus int
		wantBody   string
	}{
		"the whole kernel":      {"/assets/9.1-1/linux26", "", 200, string(testKernel)},
		"a range of the kernel": {"/assets/9.1-1/linux26?mac=" + testMAC1, "bytes=14-23", 206, string(testKernel[14:24])},
		"an open-ended range":   {"/assets/9.1-1/initrd-netboot.img", "bytes=7-", 206, "bytes"},
		"a range past the end":  {"/assets/9.1-1/initrd-netboot.img", "bytes=100-200", 416, ""},
		"an empty suffix range is unsatisfiable (RFC 9110 14.1.3)": {"/assets/9.1-1/linux26", "bytes=-0", 416, ""},
		"an empty suffix beside a good range is dropped":           {"/assets/9.1-1/linux26", "bytes=-0, 14-23", 206, string(testKernel[14:24])},
		"a suffix range":    {"/assets/9.1-1/initrd-netboot.img", "bytes=-5", 206, "bytes"},
		"a missing file":    {"/assets/9.1-1/vmlinuz", "", 404, "no such asset\n"},
		"a missing release": {"/assets/8.4-1/linux26", "", 404, "no such asset\n"},
		"a hidden name":     {"/assets/9.1-1/.tmp-initrd", "", 400, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var hdr []string
			if tc.rng != "" {
				hdr = []string{"Range", tc.rng}
			}
			code, body, h := e.get(t, tc.path, hdr...)
			if code != tc.wantStatus {
				t.Fatalf("status = %d, want %d (body %q)", code, tc.wantStatus, body)
			}
			if tc.wantBody != "" && body != tc.wantBody {
				t.Errorf("body = %q, want %q", body, tc.wantBody)
			}
			if code == 200 && h.Get("Accept-Ranges") != "bytes" {
				t.Errorf("Accept-Ranges = %q, want bytes", h.Get("Accept-Ranges"))
			}
		})
	}
}

func TestAssetsRecordDownloadsByMAC(t *testing.T) {
	e := newBootEnv(t, Config{}, testReg(t, "pve1", "sda", testMAC1))
	e.get(t, "/boot.ipxe?mac="+testMAC1)
	e.get(t, "/assets/9.1-1/linux26?mac="+testMAC1, "Range", "bytes=0-9")
	e.get(t, "/assets/9.1-1/initrd-netboot.img?mac="+strings.ToUpper(testMAC1))
	e.get(t, "/assets/9.1-1/initrd-netboot.img?mac=<b>")
	evs := e.h.Timeline().For("pve1")
	var stages []events.Kind
	for _, ev := range evs {
		stages = append(stages, ev.Stage)
	}
	if fmt.Sprint(stages) != "[script kernel initrd]" {
		t.Fatalf("pve1 stages = %v, want [script kernel initrd]", stages)
	}
	if want := fmt.Sprintf("9.1-1/linux26: 206, 10 of %d bytes sent, range bytes=0-9", len(testKernel)); evs[1].Detail != want {
		t.Errorf("kernel detail = %q, want %q", evs[1].Detail, want)
	}
	other := e.h.Timeline().Snapshot().Other
	if len(other) != 1 || !strings.Contains(other[0].Detail, `unparsable mac "<b>"`) {
		t.Errorf("unattributed = %+v, want the download with the bad mac", other)
	}
	if got, want := e.h.Metrics().assetBytes.Load(), int64(10+12+12); got != want {
		t.Errorf("asset bytes = %d, want %d", got, want)
	}
}

func TestAssetsRefuseEverythingOutsideTheAssetsFolder(t *testing.T) {
	e := newBootEnv(t, Config{})
	writeOutside(t, e.state)
	assets := filepath.Join(e.state, "assets")
	if err := os.Symlink(filepath.Join(e.state, "outside"), filepath.Join(assets, "9.1-1", "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(e.state, "registrations"), filepath.Join(assets, "regs")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../outside", filepath.Join(assets, "9.1-1", "rel-escape")); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(assets, "9.1-1", "sub"), 0o755)
	paths := map[string]string{
		"dot-dot":                       "/assets/../registrations/x.json",
		"dot-dot inside the release":    "/assets/9.1-1/../../registrations/x.json",
		"encoded dot-dot":               "/assets/%2e%2e/registrations/x.json",
		"encoded slashes":               "/assets/9.1-1/..%2f..%2fregistrations%2fx.json",
		"an encoded absolute path":      "/assets/9.1-1/%2fetc%2fpasswd",
		"an absolute path":              "/assets//etc/passwd",
		"a NUL byte":                    "/assets/9.1-1/linux26%00.txt",
		"a symlink leaving the root":    "/assets/9.1-1/escape",
		"a relative symlink leaving it": "/assets/9.1-1/rel-escape",
		"a symlinked release outside":   "/assets/regs/x.json",
		"a directory":                   "/assets/9.1-1/sub",
		"the release folder":            "/assets/9.1-1/",
		"the assets folder":             "/assets/",
		"a backslash":                   "/assets/9.1-1/..%5c..%5coutside",
	}
	for name, p := range paths {
		t.Run(name, func(t *testing.T) {
			code, body := rawGet(t, e.srv.URL, p)
			if code == 200 || code == 206 || strings.Contains(body, outsideSecret) {
				t.Errorf("GET %s = %d %q, want a refusal", p, code, body)
			}
		})
	}
	if code, _, _ := e.get(t, "/assets/9.1-1/sub"); code != http.StatusForbidden {
		t.Errorf("a directory = %d, want 403", code)
	}
	if code, _, _ := e.get(t, "/assets/9.1-1/escape"); code != http.StatusForbidden {
		t.Errorf("an escaping symlink = %d, want 403", code)
	}
}

// rawGet sends path unchanged on the wire (net/http would clean it) and
// follows no redirect.
func rawGet(t *testing.T, base, path string) (int, string) {
	t.Helper()
	u, _ := url.Parse(base)
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, u.Host)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	bufio.NewReader(resp.Body).WriteTo(&b)
	return resp.StatusCode, b.String()
}

func FuzzAssetPath(f *testing.F) {
	for _, s := range []string{"9.1-1/linux26", "../outside", "9.1-1/../../outside", "%2e%2e/outside", "9.1-1/escape", "a\x00b", "9.1-1/%2e%2e%2foutside"} {
		f.Add(s)
	}
	state := f.TempDir()
	writeOutside(f, state)
	stageRelease(f, state, "9.1-1")
	os.Symlink(filepath.Join(state, "outside"), filepath.Join(state, "assets", "9.1-1", "escape"))
	r, err := newRegistryTB(f, state)
	if err != nil {
		f.Fatal(err)
	}
	h, err := New(Config{Backend: testBackend(f, state, r, nil), AssetsDir: filepath.Join(state, "assets"), BaseURL: testBase})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, p string) {
		u, err := url.Parse("/assets/" + p)
		if err != nil {
			t.Skip("not a URL path")
		}
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.URL, req.RequestURI = u, u.RequestURI()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if strings.Contains(w.Body.String(), outsideSecret) {
			t.Fatalf("GET /assets/%q served a file outside the assets folder", p)
		}
	})
}
