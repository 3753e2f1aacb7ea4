package pxe

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
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
	t.Cleanup(cancel)
	go func() { errc <- s.Serve(ctx) }()
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
