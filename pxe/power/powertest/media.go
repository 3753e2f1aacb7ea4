package powertest

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/power"
)

var _ power.Media = (*Media)(nil)

// Media is a [power.Media] over an image server: each Arm serves a small
// image at a new path /media/tokN/NAME.iso (ArmAnswer at
// /media/tokN/NAME.img) and kills the node's one before; Disarm kills
// both. Safe for concurrent use.
type Media struct {
	srv *httptest.Server

	mu      sync.Mutex
	n       int
	live    map[string]string // node + extension -> path
	calls   []string
	refuses bool
}

// NewMedia starts the image server for the length of t.
func NewMedia(t testing.TB) *Media {
	t.Helper()
	m := &Media{live: map[string]string{}}
	content := bytes.Repeat([]byte("ISO!"), 64<<10)
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		ok := false
		for _, p := range m.live {
			ok = ok || p == r.URL.Path
		}
		m.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, "node.iso", time.Unix(0, 0), bytes.NewReader(content))
	}))
	t.Cleanup(m.srv.Close)
	return m
}

// Refuse makes every later Arm and ArmAnswer return a URL the image
// server does not serve (a BMC then refuses the image).
func (m *Media) Refuse() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.refuses = true
}

// Arm serves name's medium at a new URL, "arm NAME" (with " https").
func (m *Media) Arm(_ context.Context, name string, https bool) (string, error) {
	return m.arm("arm", name, ".iso", https), nil
}

// ArmAnswer serves name's answer image at a new URL, "arm-answer NAME".
func (m *Media) ArmAnswer(_ context.Context, name string, https bool) (string, error) {
	return m.arm("arm-answer", name, ".img", https), nil
}

func (m *Media) arm(what, name, ext string, https bool) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n++
	m.calls = append(m.calls, what+" "+name+map[bool]string{true: " https"}[https])
	if m.refuses {
		return m.srv.URL + "/nothing-here" + ext
	}
	p := "/media/tok" + strconv.Itoa(m.n) + "/" + name + ext
	m.live[name+ext] = p
	return m.srv.URL + p
}

// Disarm kills name's URLs, "disarm NAME".
func (m *Media) Disarm(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, "disarm "+name)
	delete(m.live, name+".iso")
	delete(m.live, name+".img")
	return nil
}

// Ours says image is a URL of this image server's media.
func (m *Media) Ours(image string) bool { return strings.HasPrefix(image, m.srv.URL+"/media/") }

// Calls returns the Arm, ArmAnswer and Disarm calls so far, in order.
func (m *Media) Calls() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.calls...)
}

// Armed says name's medium is served.
func (m *Media) Armed(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.live[name+".iso"] != ""
}
