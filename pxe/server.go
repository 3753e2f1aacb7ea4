package pxe

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	gopath "path"
	"strings"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/pxe/dhcpserver"
	"github.com/plasmactl/plasma-node/pxe/tftp"
)

// Defaults for [Config] fields left zero.
const (
	// DefaultHTTPAddr is where the HTTP server listens: port 8090 on every
	// address, as TAPPaaS's node-provisioner does.
	DefaultHTTPAddr = ":8090"
	// DefaultTTL is how long a provisioning window stays open: 2 hours.
	DefaultTTL = 2 * time.Hour
	// shutdownGrace is how long running requests may finish after the
	// window closes.
	shutdownGrace = 5 * time.Second
)

// ErrWindowExpired is returned by [Server.Serve] when the window closed
// because its TTL ran out (rather than because its context ended).
var ErrWindowExpired = errors.New("provisioning window expired")

// Config configures a [Server]. Zero values are the documented defaults.
type Config struct {
	// HTTPAddr is the listen address. Default: [DefaultHTTPAddr]. Ignored
	// when Listener is set.
	HTTPAddr string
	// Listener, when set, is used instead of listening on HTTPAddr (tests
	// and socket activation).
	Listener net.Listener
	// TTL closes the window this long after Serve starts. Default:
	// [DefaultTTL]; negative means no limit.
	TTL time.Duration
	// Routes are mounted on the server's mux, pattern to handler, for
	// example "POST /answer" to an answer handler. A request matching no
	// route gets 404.
	Routes map[string]http.Handler
	// TLS, when set, makes the HTTP side HTTPS with this configuration.
	TLS *tls.Config
	// PlainPaths, with TLS, are the request paths the same port also
	// serves over plain HTTP, for clients that cannot pin a self-signed
	// certificate: iPXE fetching its script, the kernel and the initrd
	// (the installer itself pins the certificate's fingerprint, so the
	// answer, first-boot script and webhook stay HTTPS). A path ending in
	// "/" is a prefix. Any other plain request gets 403. The port tells
	// the two apart by the connection's first byte.
	PlainPaths []string
	// DHCP, when set, is the window's proxy-DHCP server: it runs while the
	// window is open and stops with it.
	DHCP *dhcpserver.Server
	// TFTP, when set, serves the iPXE binaries while the window is open.
	TFTP *tftp.Server
	// Logger receives the server's events; nil discards them.
	Logger *slog.Logger
}

// Server is one provisioning window. Create it with [New] and run it with
// [Server.Serve].
type Server struct {
	cfg  Config
	log  *slog.Logger
	mux  *http.ServeMux
	mu   sync.Mutex
	addr net.Addr
	open bool
	// started is set by the first Serve.
	started bool
	// ready is closed once the listener is bound.
	ready chan struct{}
}

// New returns a server for cfg. It does no I/O.
func New(cfg Config) (*Server, error) {
	if cfg.HTTPAddr == "" {
		cfg.HTTPAddr = DefaultHTTPAddr
	}
	if cfg.TTL == 0 {
		cfg.TTL = DefaultTTL
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, log: log, mux: http.NewServeMux(), ready: make(chan struct{})}
	for pattern, h := range cfg.Routes {
		if err := register(s.mux, pattern, h); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func register(mux *http.ServeMux, pattern string, h http.Handler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("route %q: %v", pattern, r)
		}
	}()
	mux.Handle(pattern, h)
	return nil
}

// Addr returns the bound address once Serve is listening, else nil.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Ready is closed once the server is listening.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Open reports whether the window is open: the server is listening and
// its TTL has not run out.
func (s *Server) Open() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open
}

// ServeHTTP routes a request as the running server does; requests after
// the window closed get 503.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.Open() {
		http.Error(w, "provisioning window closed", http.StatusServiceUnavailable)
		return
	}
	if s.cfg.TLS != nil && r.TLS == nil && !s.plainPath(r.URL.Path) {
		http.Error(w, "this path is served over HTTPS only", http.StatusForbidden)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// Serve listens and serves until ctx ends (it returns ctx's error) or the
// TTL runs out (it returns [ErrWindowExpired]). Requests already running
// get a few seconds to finish; new ones are refused at once.
func (s *Server) Serve(ctx context.Context) error {
	s.mu.Lock()
	started := s.started
	s.started = true
	s.mu.Unlock()
	if started {
		return errors.New("pxe: Serve called twice; a Server serves one window")
	}
	ln := s.cfg.Listener
	if ln == nil {
		var lc net.ListenConfig
		l, err := lc.Listen(ctx, "tcp", s.cfg.HTTPAddr)
		if err != nil {
			return fmt.Errorf("listen on %s: %w", s.cfg.HTTPAddr, err)
		}
		ln = l
	}
	switch {
	case s.cfg.TLS != nil && len(s.cfg.PlainPaths) > 0:
		ln = newSniffListener(ln, s.cfg.TLS)
	case s.cfg.TLS != nil:
		ln = tls.NewListener(ln, s.cfg.TLS)
	}
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	s.mu.Lock()
	s.addr, s.open = ln.Addr(), true
	s.mu.Unlock()
	close(s.ready)
	s.log.Info("provisioning window open", "http", ln.Addr().String(), "ttl", s.cfg.TTL.String())

	errc := make(chan error, 3)
	go func() { errc <- fmt.Errorf("http server: %w", hs.Serve(ln)) }()
	// The network-boot services share a context that ends with the window.
	svcCtx, stopServices := context.WithCancel(ctx)
	var services sync.WaitGroup
	defer services.Wait()
	defer stopServices()
	for name, svc := range s.services() {
		services.Go(func() {
			if err := svc.Serve(svcCtx); err != nil && svcCtx.Err() == nil {
				errc <- fmt.Errorf("%s server: %w", name, err)
			}
		})
	}
	var expired <-chan time.Time
	if s.cfg.TTL > 0 {
		t := time.NewTimer(s.cfg.TTL)
		defer t.Stop()
		expired = t.C
	}
	var result error
	select {
	case err := <-errc:
		s.close()
		stopServices()
		hs.Close()
		return err
	case <-ctx.Done():
		result = ctx.Err()
	case <-expired:
		result = ErrWindowExpired
	}
	s.close()
	stopServices()
	s.log.Info("provisioning window closed", "reason", result.Error())
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	return result
}

// plainPath reports whether path is one of [Config.PlainPaths].
func (s *Server) plainPath(path string) bool {
	if clean := gopath.Clean(path); clean != path && clean+"/" != path {
		return false // the mux redirects it; the clean path is checked then
	}
	for _, p := range s.cfg.PlainPaths {
		if path == p || (strings.HasSuffix(p, "/") && strings.HasPrefix(path, p)) {
			return true
		}
	}
	return false
}

// services returns the network-boot services configured, by name.
func (s *Server) services() map[string]interface{ Serve(context.Context) error } {
	out := map[string]interface{ Serve(context.Context) error }{}
	if s.cfg.DHCP != nil {
		out["dhcp"] = s.cfg.DHCP
	}
	if s.cfg.TFTP != nil {
		out["tftp"] = s.cfg.TFTP
	}
	return out
}

func (s *Server) close() {
	s.mu.Lock()
	s.open = false
	s.mu.Unlock()
}
