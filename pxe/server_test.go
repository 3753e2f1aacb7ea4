package pxe

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/plasmactl/plasma-node/pxe/window"
)

func start(t *testing.T, cfg Config) (*Server, string, chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Listener = ln
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	// Cleanups run last first: this one, registered after any t.TempDir the
	// caller made for the server, waits for Serve to return before that
	// folder is removed (a window still writing into it made the removal
	// fail with "directory not empty").
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return within 10 s of its context's end")
		}
	})
	go func() {
		defer close(done)
		errc <- s.Serve(ctx)
	}()
	<-s.Ready()
	return s, "http://" + s.Addr().String(), errc
}

func TestServerRoutesAndRefusesOthers(t *testing.T) {
	hello := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "hello") })
	_, base, _ := start(t, Config{Routes: map[string]http.Handler{"POST /answer": hello}})
	tests := map[string]struct {
		method, path string
		want         int
	}{
		"a mounted route answers":       {"POST", "/answer", 200},
		"another method of it gets 405": {"GET", "/answer", 405},
		"an unknown path gets 404":      {"GET", "/etc/passwd", 404},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, base+tc.path, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status = %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
}

func TestWindowClosesWhenTTLRunsOut(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {})
	s, base, errc := start(t, Config{TTL: 300 * time.Millisecond, Routes: map[string]http.Handler{"GET /status": ok}})
	if resp, err := http.Get(base + "/status"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("before expiry: %v %v", resp, err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, ErrWindowExpired) {
			t.Errorf("Serve = %v, want ErrWindowExpired", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Serve did not return within 2s of a 300ms TTL")
	}
	if s.Open() {
		t.Error("window still open after expiry")
	}
	if _, err := http.Get(base + "/status"); err == nil {
		t.Error("a request after expiry was served")
	}
}

func TestServeEndsWithItsContext(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	s, _ := New(Config{Listener: ln})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := s.Serve(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Serve = %v, want context.DeadlineExceeded", err)
	}
}

func TestNewRefusesABadRoute(t *testing.T) {
	if _, err := New(Config{Routes: map[string]http.Handler{"GET x/{bad": http.NotFoundHandler()}}); err == nil {
		t.Error("New accepted a malformed route pattern")
	}
}

func TestNewRefusesSecureBootWithoutADHCPInterface(t *testing.T) {
	_, err := New(Config{SecureBoot: true, StateDir: t.TempDir()})
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Field != "SecureBoot" || !strings.Contains(ce.Reason, "DHCP interface") {
		t.Errorf("New: %v; want a SecureBoot ConfigError asking for a DHCP interface", err)
	}
}

func TestASecondWindowOnOneStateFolderIsRefused(t *testing.T) {
	state, secrets := t.TempDir(), t.TempDir()
	cfg := nodeProvisioner(t, Config{StateDir: state}, secrets)
	first, _, firstDone := start(t, cfg)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	second, err := New(nodeProvisioner(t, Config{StateDir: state, Listener: ln}, secrets))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err = second.Serve(ctx)
	var held *window.HeldError
	if !errors.As(err, &held) || !errors.Is(err, window.ErrOpen) {
		t.Fatalf("second Serve = %v, want a *window.HeldError matching window.ErrOpen", err)
	}
	want := &window.HeldError{StateDir: state, PID: os.Getpid(), HTTP: first.Addr().String()}
	if diff := cmp.Diff(want, held, cmpopts.IgnoreFields(window.HeldError{}, "Since")); diff != "" {
		t.Errorf("holder (-want +got):\n%s", diff)
	}
	if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("the refused window left its listener open: %v", err)
	}
	w, err := window.Read(state)
	for end := time.Now().Add(5 * time.Second); err != nil && time.Now().Before(end); w, err = window.Read(state) {
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil || w.HTTP != first.Addr().String() {
		t.Errorf("window record = %+v, %v; want the first window's", w, err)
	}
	if h, err := window.Holder(state); err != nil || h == nil || h.HTTP != first.Addr().String() {
		t.Errorf("WindowHolder = %+v, %v; want the first window", h, err)
	}
	if !first.Open() {
		t.Error("the first window closed")
	}

	// Once the first window ends, the folder is free again.
	first.cfg.Listener.Close()
	if err := <-firstDone; err == nil {
		t.Fatal("first Serve returned nil")
	}
	if h, err := window.Holder(state); err != nil || h != nil {
		t.Errorf("WindowHolder after the first window = %+v, %v; want none", h, err)
	}
	third, _, thirdDone := start(t, cfg)
	if !third.Open() {
		t.Error("a window after the first one ended did not open")
	}
	third.cfg.Listener.Close()
	<-thirdDone
}

// Open reports whether the window is open: the server is listening and
// its TTL has not run out.
func (s *Server) Open() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open
}
