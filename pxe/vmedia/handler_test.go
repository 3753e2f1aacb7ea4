package vmedia

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// lab is a window's state folder with a medium handler over a fake
// image, counting what the handler asked of it.
type lab struct {
	dir     string
	arm     Dir
	h       *Handler
	srv     *httptest.Server
	image   []byte
	made    atomic.Int32 // Media calls
	claimed atomic.Int32 // Claim calls
	closed  atomic.Int32 // Medium.Close calls
	inRead  atomic.Int32 // ReadAt calls running
	maxRead atomic.Int32
	gate    chan struct{} // when set, ReadAt waits on it
	rearmed atomic.Bool   // the medium's Live says no
}

// vmNode is a registration that boots from virtual media.
func vmNode(name string) registry.Registration {
	return registry.Registration{Name: name, BootDisk: answer.BootDisk{Kind: answer.BootDiskAny}, BootMethod: registry.BootVirtualMedia,
		BMC: &registry.BMC{URL: "redfish://10.0.0.5", User: "root"}}
}

func newLab(t *testing.T, max int) *lab {
	t.Helper()
	l := &lab{dir: t.TempDir(), image: bytes.Repeat([]byte("0123456789abcdef"), 4096)}
	if err := window.Write(l.dir, &window.Record{PID: os.Getpid(), HTTP: "127.0.0.1:8090", URL: "https://192.0.2.1:8090/answer", Started: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	l.arm = Dir{StateDir: l.dir}
	l.h = New(Config{StateDir: l.dir, WindowPID: os.Getpid(), MaxPerSource: max, LiveEvery: time.Nanosecond, Media: func(ctx context.Context, node string, _ Kind, ip string) (*Medium, error) {
		if node == "refused" {
			return nil, fmt.Errorf("%w: not pending", backend.ErrNoAnswer)
		}
		l.made.Add(1)
		return &Medium{Image: (*slowReader)(l), Size: int64(len(l.image)), ModTime: time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC),
			Claim: func(context.Context) error { l.claimed.Add(1); return nil },
			Close: func() error { l.closed.Add(1); return nil },
			Live:  func(context.Context) bool { return !l.rearmed.Load() }}, nil
	}})
	l.srv = httptest.NewServer(l.h)
	t.Cleanup(l.srv.Close)
	return l
}

// slowReader reads the lab's image, waiting on its gate when set.
type slowReader lab

func (r *slowReader) ReadAt(p []byte, off int64) (int, error) {
	l := (*lab)(r)
	n := l.inRead.Add(1)
	defer l.inRead.Add(-1)
	for {
		m := l.maxRead.Load()
		if n <= m || l.maxRead.CompareAndSwap(m, n) {
			break
		}
	}
	if l.gate != nil {
		<-l.gate
	}
	return bytes.NewReader(l.image).ReadAt(p, off)
}

// armed arms node and returns its URL's path.
func (l *lab) armed(t *testing.T, node string) string {
	t.Helper()
	u, err := l.arm.Arm(context.Background(), node, false)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := url.Parse(u)
	if p.Scheme != "http" || p.Host != "192.0.2.1:8090" || !l.arm.Ours(u) {
		t.Fatalf("armed URL %s", u)
	}
	return p.Path
}

// get requests path from the client address from (the test server's
// when empty).
func (l *lab) get(t *testing.T, method, path, from string, header ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if from == "" {
		from = "127.0.0.1:40000"
	}
	req.RemoteAddr = from
	rec := httptest.NewRecorder()
	l.h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(r *http.Response) string {
	b, _ := io.ReadAll(r.Body)
	return string(b)
}

// Ranges, HEAD, ETag, Last-Modified and conditional requests are served
// as a BMC reads an image.
func TestMediaServesRangesAndHEAD(t *testing.T) {
	l := newLab(t, 0)
	p := l.armed(t, "pve1")
	size := len(l.image)
	tests := map[string]struct {
		method string
		header []string
		status int
		body   string
	}{
		"HEAD tells the size":         {"HEAD", nil, 200, ""},
		"a whole GET":                 {"GET", nil, 200, string(l.image)},
		"one range":                   {"GET", []string{"Range", "bytes=16-31"}, 206, string(l.image[16:32])},
		"a range to the end":          {"GET", []string{"Range", fmt.Sprintf("bytes=%d-", size-5)}, 206, string(l.image[size-5:])},
		"a range past the end":        {"GET", []string{"Range", fmt.Sprintf("bytes=%d-%d", size, size+10)}, 416, ""},
		"a cached copy is not resent": {"GET", []string{"If-Modified-Since", "Sun, 06 Dec 2026 07:00:00 GMT"}, 304, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := l.get(t, tc.method, p, "", tc.header...)
			got := body(r)
			if r.StatusCode != tc.status || (tc.body != "" && got != tc.body) {
				t.Errorf("%d, %d bytes; want %d", r.StatusCode, len(got), tc.status)
			}
			if tc.status == 200 && (r.Header.Get("ETag") == "" || r.Header.Get("Last-Modified") != "Sun, 06 Dec 2026 06:00:00 GMT" || r.Header.Get("Accept-Ranges") != "bytes" || r.ContentLength != int64(size)) {
				t.Errorf("headers %v", r.Header)
			}
		})
	}
	multi := l.get(t, "GET", p, "", "Range", "bytes=0-3,100-103")
	if b := body(multi); multi.StatusCode != 206 || !strings.HasPrefix(multi.Header.Get("Content-Type"), "multipart/byteranges") || !strings.Contains(b, "0123") || !strings.Contains(b, string(l.image[100:104])) {
		t.Errorf("two ranges: %d %s", multi.StatusCode, multi.Header.Get("Content-Type"))
	}
	etag := l.get(t, "HEAD", p, "").Header.Get("ETag")
	if r := l.get(t, "GET", p, "", "If-None-Match", etag); r.StatusCode != 304 {
		t.Errorf("If-None-Match of the ETag: %d", r.StatusCode)
	}
	if r := l.get(t, "POST", p, ""); r.StatusCode != 405 {
		t.Errorf("POST: %d", r.StatusCode)
	}
}

// Hostile requests for media: a guessed URL, one of another node, a
// reused one after install (disarmed by the eject), a re-arm or the
// window's close, a fetch from a second address. The medium is made only
// for its armed URL, claimed once, and dropped after.
func TestMediaRefusesHostileRequests(t *testing.T) {
	l := newLab(t, 0)
	p := l.armed(t, "pve1")
	token := strings.Split(p, "/")[2]
	guess := "/media/" + strings.Repeat("A", 43) + "/pve1.iso"
	for name, path := range map[string]string{
		"a guessed token":                  guess,
		"the token of another node's name": "/media/" + token + "/pve2.iso",
		"a token one character off":        "/media/" + token[:42] + otherChar(token[42]) + "/pve1.iso",
		"a path of another shape":          "/media/" + token + "/pve1.img",
	} {
		if r := l.get(t, "GET", path, ""); r.StatusCode != 404 {
			t.Errorf("%s: %d", name, r.StatusCode)
		}
	}
	if l.made.Load() != 0 {
		t.Fatalf("a refused URL made the medium %d times", l.made.Load())
	}
	if r := l.get(t, "HEAD", p, "10.0.0.7:1"); r.StatusCode != 200 || l.claimed.Load() != 0 {
		t.Fatalf("HEAD: %d, claimed %d (HEAD claims nothing)", r.StatusCode, l.claimed.Load())
	}
	for range 3 {
		if r := l.get(t, "GET", p, "10.0.0.9:1", "Range", "bytes=0-9"); r.StatusCode != 206 {
			t.Fatalf("GET by the BMC: %d", r.StatusCode)
		}
	}
	if r := l.get(t, "GET", p, "10.0.0.8:1"); r.StatusCode != 403 {
		t.Errorf("a fetch from a second address: %d", r.StatusCode)
	}
	if r := l.get(t, "HEAD", p, "10.0.0.8:1"); r.StatusCode != 403 {
		t.Errorf("a HEAD from a second address: %d", r.StatusCode)
	}
	// The node installed: the eject disarms; a BMC that never ejects
	// reads on and gets nothing.
	if err := l.arm.Disarm(context.Background(), "pve1"); err != nil {
		t.Fatal(err)
	}
	if r := l.get(t, "GET", p, "10.0.0.9:1", "Range", "bytes=0-9"); r.StatusCode != 404 {
		t.Errorf("the URL after the node installed: %d", r.StatusCode)
	}
	// Re-armed: the old URL dies, the new one is a new medium.
	p2 := l.armed(t, "pve1")
	if r := l.get(t, "GET", p, "10.0.0.9:1"); r.StatusCode != 404 {
		t.Errorf("the URL before a re-arm: %d", r.StatusCode)
	}
	if r := l.get(t, "GET", p2, "10.0.0.8:1", "Range", "bytes=0-9"); r.StatusCode != 206 {
		t.Errorf("the re-armed URL: %d", r.StatusCode)
	}
	// The window closes: every URL is gone.
	l.h.Close()
	if r := l.get(t, "GET", p2, "10.0.0.8:1"); r.StatusCode != 410 {
		t.Errorf("after the window closed: %d", r.StatusCode)
	}
	if err := Clear(l.dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(l.dir, DirName)); !os.IsNotExist(err) {
		t.Errorf("armed media left after Clear: %v", err)
	}
	got := []int32{l.made.Load(), l.claimed.Load(), l.closed.Load()}
	if diff := cmp.Diff([]int32{2, 2, 2}, got); diff != "" {
		t.Errorf("made, claimed, closed (-want +got):\n%s", diff)
	}
	if r := l.get(t, "GET", "/media/"+strings.Repeat("B", 43)+"/refused.iso", ""); r.StatusCode != 404 {
		t.Errorf("a node the backend refuses: %d", r.StatusCode)
	}
}

// 500 parallel ranges from one BMC: at most MaxPerSource are read at
// once, the rest get 503 at once with Retry-After, every one ends, the
// medium is made and claimed once, and the bound is free after.
func TestMedia500ParallelRanges(t *testing.T) {
	l := newLab(t, 4)
	p := l.armed(t, "pve1")
	l.gate = make(chan struct{})
	var wg sync.WaitGroup
	var ok, busy, other atomic.Int32
	start := time.Now()
	for i := range 500 {
		wg.Go(func() {
			req, _ := http.NewRequest("GET", l.srv.URL+p, nil)
			req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", i*100, i*100+99))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				other.Add(1)
				return
			}
			defer resp.Body.Close()
			io.Copy(io.Discard, resp.Body)
			switch {
			case resp.StatusCode == 206:
				ok.Add(1)
			case resp.StatusCode == 503 && resp.Header.Get("Retry-After") != "":
				busy.Add(1)
			default:
				other.Add(1)
			}
		})
	}
	// Let the refused ones come back, then the held ones read.
	for busy.Load() < 496 && time.Since(start) < 20*time.Second {
		time.Sleep(10 * time.Millisecond)
	}
	close(l.gate)
	wg.Wait()
	if ok.Load() < 1 || ok.Load() > 4 || ok.Load()+busy.Load() != 500 || other.Load() != 0 {
		t.Errorf("206: %d, 503: %d, other: %d; want at most 4 served and the rest 503", ok.Load(), busy.Load(), other.Load())
	}
	if l.maxRead.Load() > 4 || l.made.Load() != 1 || l.claimed.Load() != 1 {
		t.Errorf("reads at once %d, made %d, claimed %d", l.maxRead.Load(), l.made.Load(), l.claimed.Load())
	}
	l.gate = nil
	if r := l.get(t, "GET", p, "127.0.0.1:1", "Range", "bytes=0-1"); r.StatusCode != 206 {
		t.Errorf("after the storm: %d (the bound is not freed)", r.StatusCode)
	}
}

// The window closing mid-fetch: the read running fails or ends, the
// medium is closed, and nothing is served after; it was claimed once.
func TestMediaWindowClosesMidFetch(t *testing.T) {
	l := newLab(t, 0)
	p := l.armed(t, "pve1")
	l.gate = make(chan struct{})
	done := make(chan *http.Response)
	go func() { done <- l.get(t, "GET", p, "10.0.0.9:1") }()
	for l.inRead.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	l.h.Close()
	Clear(l.dir)
	close(l.gate)
	<-done
	if r := l.get(t, "GET", p, "10.0.0.9:1"); r.StatusCode != 404 && r.StatusCode != 410 {
		t.Errorf("after the close: %d", r.StatusCode)
	}
	if l.made.Load() != 1 || l.claimed.Load() != 1 || l.closed.Load() != 1 {
		t.Errorf("made %d, claimed %d, closed %d; want the old URL to consume nothing again", l.made.Load(), l.claimed.Load(), l.closed.Load())
	}
}

// Arm refuses a state folder with no open window; its record keeps no
// token, 0600 in a 0700 folder.
func TestArm(t *testing.T) {
	l := newLab(t, 0)
	p := l.armed(t, "pve1")
	rec, _ := os.ReadFile(filepath.Join(l.dir, DirName, "pve1.json"))
	if strings.Contains(string(rec), strings.Split(p, "/")[2]) {
		t.Error("the record keeps the token")
	}
	for _, f := range []string{filepath.Join(l.dir, DirName), filepath.Join(l.dir, DirName, "pve1.json")} {
		st, _ := os.Stat(f)
		if st.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is %v", f, st.Mode())
		}
	}
	if _, err := (Dir{StateDir: t.TempDir()}).Arm(context.Background(), "pve1", false); err == nil || !strings.Contains(err.Error(), ErrNoWindow.Error()) {
		t.Errorf("no window: %v", err)
	}
	if (Dir{}).Ours("http://bmc/other.iso") || !(Dir{}).Ours("http://10.0.0.2:8090"+p) {
		t.Error("Ours")
	}
}

// otherChar is a token character other than c.
func otherChar(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

// A claimed medium whose registration is re-armed without a new boot
// dies: the BMC reading on gets 404, and the medium is dropped.
func TestMediaDiesWithARearm(t *testing.T) {
	l := newLab(t, 0)
	p := l.armed(t, "pve1")
	if r := l.get(t, "GET", p, "10.0.0.9:1", "Range", "bytes=0-9"); r.StatusCode != 206 {
		t.Fatalf("GET: %d", r.StatusCode)
	}
	l.rearmed.Store(true)
	for range 2 {
		if r := l.get(t, "GET", p, "10.0.0.9:1", "Range", "bytes=0-9"); r.StatusCode != 404 {
			t.Errorf("after the re-arm: %d", r.StatusCode)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); l.closed.Load() != 1 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if l.made.Load() != 1 || l.claimed.Load() != 1 || l.closed.Load() != 1 {
		t.Errorf("made %d, claimed %d, closed %d; want the old URL to consume nothing again", l.made.Load(), l.claimed.Load(), l.closed.Load())
	}
}
