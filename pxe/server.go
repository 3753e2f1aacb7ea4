package pxe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	gopath "path"
	"strings"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/pxe/discovery"

	"github.com/plasmactl/plasma-node/internal/hostport"
	"github.com/plasmactl/plasma-node/internal/lockfile"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/dhcpserver"
	"github.com/plasmactl/plasma-node/pxe/netboot"
	"github.com/plasmactl/plasma-node/pxe/tftp"
	"github.com/plasmactl/plasma-node/pxe/vmedia"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// Defaults for [Config] fields left zero.
const (
	// DefaultHTTPAddr is where the HTTP server listens: port 8090 on every
	// address, as TAPPaaS's node-provisioner does.
	DefaultHTTPAddr = ":8090"
	// DefaultTTL is how long a provisioning window stays open: 2 hours.
	DefaultTTL = 2 * time.Hour
	// NoTTL as Config.TTL keeps the window open until Serve's context
	// ends.
	NoTTL time.Duration = math.MinInt64
	// DefaultBootFile is the iPXE binary offered to UEFI clients.
	DefaultBootFile = "snponly.efi"
	// DefaultTFTPMaxTransfers is how many TFTP transfers run at once
	// ([tftp.DefaultMaxTransfers]).
	DefaultTFTPMaxTransfers = tftp.DefaultMaxTransfers
	// DefaultTFTPMaxTransfersPerClient is how many TFTP transfers one
	// client (an address; an IPv6 /64 together 8 times as many) runs at
	// once
	// ([tftp.DefaultMaxTransfersPerClient]).
	DefaultTFTPMaxTransfersPerClient = tftp.DefaultMaxTransfersPerClient
	// DefaultIPXEDir is where Debian's ipxe package puts the iPXE
	// binaries.
	DefaultIPXEDir = "/usr/lib/ipxe"
	// shutdownGrace is how long running requests may finish after the
	// window closes.
	shutdownGrace = 5 * time.Second
)

// ErrWindowExpired is returned by [Server.Serve] when the window closed
// because its TTL ran out (rather than because its context ended).
var ErrWindowExpired = errors.New("provisioning window expired")

// Config configures a [Server]: one provisioning window. Zero values are
// the documented defaults. A Config without a Backend serves only its
// Routes (and closes with its TTL).
type Config struct {
	// StateDir is node-provisioner's state folder: staged boot assets
	// (assets/), the TFTP root (tftp/), the TLS certificate (tls/), the
	// window record (window.json) and the lock that keeps it to one
	// window at a time (window.lock).
	StateDir string
	// Backend answers the window's questions: which machine boots, what
	// it installs, what answer its installer gets; node-provisioner's is
	// package pxe/backend/regbackend's, over its stores (regbackend.Open).
	// The window opens no store: a backend with work to do when a window
	// opens ([backend.Starter]) is started under the state folder's lock.
	// Nil serves only Routes, and is refused with a boot setting.
	Backend backend.Backend

	// HTTPAddr is the HTTP listen address. Default: [DefaultHTTPAddr].
	// Ignored when Listener is set.
	HTTPAddr string
	// Listener, when set, is used instead of listening on HTTPAddr (tests
	// and socket activation). Serve closes it.
	Listener net.Listener
	// TTL closes the window this long after Serve starts. Default:
	// [DefaultTTL]; [NoTTL] means no limit. Any other negative TTL (a
	// deadline already passed) is refused: the window never opens; so is
	// one over [window.MaxTTL]. (A TTL under [window.MinTTL] is served:
	// a window restarted near its deadline has less left.)
	TTL time.Duration
	// BaseURL is the URL installers reach the window at, for first-boot
	// and webhook URLs in answers and, without a DHCP interface, for boot
	// scripts. Default: taken from each answer request; scripts name the
	// server IP with a DHCP interface, else the listen address (the host
	// name when that is unspecified).
	BaseURL string
	// TLS serves HTTPS with the certificate in <StateDir>/tls (made on
	// first use). Answers, first-boot scripts and webhooks are HTTPS only
	// and pin the certificate's fingerprint; iPXE's script, kernel,
	// initrd and binaries stay plain HTTP on the same port, since iPXE
	// cannot pin a self-signed certificate.
	TLS bool

	// DHCPInterface, when set, answers PXE clients on this interface with
	// proxy-DHCP (UDP 67 and 4011) and serves the iPXE binaries by TFTP;
	// the site's DHCP server is left alone.
	DHCPInterface string
	// ServerIP is this server's IPv4 address on the clients' network.
	// Default: the first IPv4 address of DHCPInterface.
	ServerIP netip.Addr
	// ServerIP6 is this server's IPv6 address on the clients' network: the
	// DHCPv6 boot answer's and the IPv6 boot URLs' address, where TFTP
	// over IPv6 listens. A global or unique-local address; a link-local
	// one is refused (no boot file URL can carry the client's zone).
	// Default: the first global or unique-local IPv6 address of
	// DHCPInterface.
	ServerIP6 netip.Addr
	// TFTPAddr is the TFTP listen address. Default: <ServerIP>:69.
	TFTPAddr string
	// TFTPMaxTransfers and TFTPMaxTransfersPerClient bound the TFTP
	// transfers running at once, in all and per client (an address;
	// the addresses of an IPv6 /64 together 8 times as many).
	// Default: [tftp.DefaultMaxTransfers] and
	// [tftp.DefaultMaxTransfersPerClient].
	TFTPMaxTransfers, TFTPMaxTransfersPerClient int
	// BootFile is the iPXE binary offered to UEFI clients: snponly.efi or
	// ipxe.efi. Default: [DefaultBootFile].
	BootFile string
	// SecureBoot offers every UEFI x86-64 machine the Secure Boot chain
	// (shim, signed grub, the signed installer kernel) instead of iPXE:
	// shim and grub by TFTP (or UEFI HTTP boot), grub's configuration per
	// machine from the window, the kernel and initrd over HTTP. The
	// release booted must carry the chain ([bootassets.AssetShim] and
	// [bootassets.AssetGrub], staged by prepare); the window refuses to
	// open without it. Off, a
	// registration may still ask for the chain for its machine.
	SecureBoot bool
	// IPXEDir is the folder of the iPXE binaries staged into the TFTP
	// root. Default: [DefaultIPXEDir].
	IPXEDir string
	// DHCPConn, PXEConn and TFTPConn, when set, are used instead of
	// listening on the DHCP, PXE and TFTP ports (tests, sockets opened
	// early). Serve closes them.
	DHCPConn, PXEConn net.PacketConn
	TFTPConn          *net.UDPConn

	// Release is the staged release to boot. Default: the only one.
	Release string
	// KernelArgs are added to the installer kernel's command line, each
	// one word of printable ASCII, such as console=ttyS0,115200.
	KernelArgs []string
	// DHCPHook, when set, is run (sh -c) as the window opens and closes,
	// for sites that set PXE options on their own DHCP server (see
	// runHook).
	DHCPHook string
	// HTTPLimits bound the HTTP connections: idle keep-alive, stalled
	// bodies, clients that stop reading, connections per client
	// address. Zero fields are the defaults of [HTTPLimits].
	HTTPLimits HTTPLimits
	// Routes are mounted beside the window's own, pattern to handler; a
	// more specific pattern takes a request from the window's.
	Routes map[string]http.Handler
	// RecordBootSteps records each boot step below the answer (proxy-DHCP
	// offer, TFTP download, iPXE script, kernel, initrd and other assets)
	// in the backend's event log ([backend.Recorder]) as an event whose
	// kind is the step ([events.Kind]), so that followers of the
	// log see the boot as it happens (the daemon's event stream). The
	// answer-side steps are recorded by the backend already.
	RecordBootSteps bool
	// Discover makes the window a discovery window: proxy-DHCP offers
	// every machine a boot file, and a machine no registration knows
	// boots the release's kernel with the discovery initrd, whose agent
	// reports the machine (NICs, DMI, disks) to the inbox and powers
	// off; it gets no answer until it is registered. It is refused with
	// SecureBoot; node-provisioner's backend refuses a discovery window
	// while a pending registration pins no machine (regbackend's
	// ErrUnpinnedPending).
	Discover bool
	// Inbox keeps a discovery window's reports; required with Discover.
	Inbox discovery.Store
	// Enrol, with Discover, enrols each machine the inbox keeps by the
	// site's rules ([netboot.Discovery].Enrol); nil enrols none.
	Enrol func(ctx context.Context, rec discovery.Record) netboot.Enrolment
	// EnrolPreview, with Discover, says what the site's rules would make
	// of each inbox machine, for the status page
	// ([netboot.Discovery].Preview); nil shows the machines alone.
	EnrolPreview func(ctx context.Context, recs []discovery.Record) (map[string]netboot.Enrolment, error)
	// OnOpen, when set, is called once the window serves, with its
	// record.
	OnOpen func(*window.Record)
	// Logger receives the window's events; nil discards them.
	Logger *slog.Logger
}

// ConfigError is a [Config] field the window cannot run with: Field is
// the Config field's name. It is the seam's [backend.ConfigError], so a
// program that builds the backend too tells both refusals one way.
type ConfigError = backend.ConfigError

// Server is one provisioning window. Create it with [New] and run it with
// [Server.Serve]; it serves one window.
type Server struct {
	cfg  Config
	log  *slog.Logger
	mu   sync.Mutex
	addr net.Addr
	open bool
	// started is set by the first Serve.
	started bool
	// ready is closed once the listener is bound.
	ready chan struct{}
	// handler serves requests while open; set by Serve.
	handler http.Handler
	// plain lists the paths served over plain HTTP beside TLS.
	plain []string
	// nb is the window's HTTP handler, once serving.
	nb *netboot.Handler
	// tweakDHCP, set by tests, adjusts the DHCP server before it runs.
	tweakDHCP func(*dhcpserver.Server)
}

// New returns a server for cfg, with the defaults filled in. It checks
// what it can without I/O and does none.
func New(cfg Config) (*Server, error) {
	if cfg.HTTPAddr == "" {
		cfg.HTTPAddr = DefaultHTTPAddr
	}
	if cfg.TTL == 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.BootFile == "" {
		cfg.BootFile = DefaultBootFile
	}
	if cfg.IPXEDir == "" {
		cfg.IPXEDir = DefaultIPXEDir
	}
	cfg.HTTPLimits = cfg.HTTPLimits.withDefaults()
	if err := cfg.check(); err != nil {
		return nil, err
	}
	scratch := http.NewServeMux()
	for pattern, h := range cfg.Routes {
		if err := register(scratch, pattern, h); err != nil {
			return nil, err
		}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{cfg: cfg, log: log, ready: make(chan struct{})}, nil
}

func (c *Config) check() error {
	if c.TTL < 0 && c.TTL != NoTTL {
		return &ConfigError{Field: "TTL", Value: c.TTL.String(), Reason: "the window would close before it opens; want a TTL in the future"}
	}
	if c.TTL > window.MaxTTL {
		return &ConfigError{Field: "TTL", Value: c.TTL.String(), Reason: window.TTLRule, Err: window.ErrInvalidTTL}
	}
	if err := hostport.CheckListen(c.HTTPAddr); err != nil {
		return &ConfigError{Field: "HTTPAddr", Value: c.HTTPAddr, Reason: "invalid listen address", Err: err}
	}
	if err := c.checkAdvertised(); err != nil {
		return err
	}
	if c.TFTPAddr != "" {
		if err := hostport.CheckListen(c.TFTPAddr); err != nil {
			return &ConfigError{Field: "TFTPAddr", Value: c.TFTPAddr, Reason: "invalid listen address", Err: err}
		}
	}
	if c.BootFile != "snponly.efi" && c.BootFile != "ipxe.efi" {
		return &ConfigError{Field: "BootFile", Value: c.BootFile, Reason: "want snponly.efi or ipxe.efi"}
	}
	for _, k := range c.KernelArgs {
		if k == "" || strings.ContainsFunc(k, func(r rune) bool { return r <= ' ' || r > '~' }) {
			return &ConfigError{Field: "KernelArgs", Value: k, Reason: "want one word of printable ASCII, such as console=ttyS0,115200"}
		}
	}
	if c.SecureBoot && c.DHCPInterface == "" {
		return &ConfigError{Field: "SecureBoot", Reason: "the Secure Boot chain is offered by proxy-DHCP and served by TFTP: give a DHCP interface"}
	}
	if c.DHCPInterface == "" && (c.ServerIP.IsValid() || c.ServerIP6.IsValid() || c.TFTPAddr != "") {
		return &ConfigError{Field: "DHCPInterface", Reason: "a server IP or TFTP address needs a DHCP interface"}
	}
	if c.ServerIP6.IsValid() && (!c.ServerIP6.Is6() || c.ServerIP6.Is4In6() || c.ServerIP6.Zone() != "") {
		return &ConfigError{Field: "ServerIP6", Value: c.ServerIP6.String(), Reason: "want this server's global or unique-local IPv6 address, such as 2001:db8::2"}
	}
	if c.ServerIP.IsValid() && !c.ServerIP.Is4() {
		return &ConfigError{Field: "ServerIP", Value: c.ServerIP.String(), Reason: "want this server's IPv4 address"}
	}
	if c.Discover && c.SecureBoot {
		return &ConfigError{Field: "Discover", Reason: "discovery under Secure Boot is not supported; open a window without it"}
	}
	if c.TLS && c.StateDir == "" {
		return &ConfigError{Field: "TLS", Reason: "the certificate lives in the state folder; give one"}
	}
	if c.Backend == nil && c.StateDir == "" && c.DHCPInterface != "" {
		return &ConfigError{Field: "Backend", Reason: "network boot needs a backend or a state folder of registrations"}
	}
	return nil
}

// checkAdvertised refuses a link-local IPv6 address where machines would
// be told to dial it ([hostport.CheckAdvertised]): the base URL, or the
// listen address when boot scripts and answer URLs would name it (no
// base URL, no DHCP interface).
func (c *Config) checkAdvertised() error {
	const reason = "machines cannot be told to dial it"
	if u, err := url.Parse(c.BaseURL); c.BaseURL != "" && err == nil {
		if err := hostport.CheckAdvertised(u.Hostname()); err != nil {
			return &ConfigError{Field: "BaseURL", Value: c.BaseURL, Reason: reason, Err: err}
		}
	}
	if c.ServerIP6.IsValid() {
		if err := hostport.CheckAdvertised(c.ServerIP6.String()); err != nil {
			return &ConfigError{Field: "ServerIP6", Value: c.ServerIP6.String(), Reason: reason, Err: err}
		}
	}
	if host, _, err := net.SplitHostPort(c.HTTPAddr); err == nil && c.BaseURL == "" && c.DHCPInterface == "" {
		if err := hostport.CheckAdvertised(host); err != nil {
			return &ConfigError{Field: "HTTPAddr", Value: c.HTTPAddr, Reason: reason + " (boot scripts and answers name the listen address without a base URL); give a base URL with an address they reach", Err: err}
		}
	}
	return nil
}

// Addr returns the bound address once Serve is listening, else nil.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Netboot returns the window's HTTP handler once Serve serves, else
// nil. Its FullPage and FullStatus show the status with every MAC,
// serial, UUID and address whole, which the window's own port masks:
// serve them only to a reader the caller authenticates (the daemon's
// API does, for a read token).
func (s *Server) Netboot() *netboot.Handler {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nb
}

// Ready is closed once the server is listening.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// ServeHTTP routes a request as the running server does; requests after
// the window closed get 503, plain-HTTP requests for HTTPS-only paths of
// a TLS window get 403. A boot file asked for with doubled slashes, as
// shim asks for grub over UEFI HTTP boot, is served at its clean path.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	open, h := s.open, s.handler
	s.mu.Unlock()
	if !open || h == nil {
		http.Error(w, "provisioning window closed", http.StatusServiceUnavailable)
		return
	}
	r = httpBootPath(r)
	if s.plain != nil && r.TLS == nil && !s.plainPath(r.URL.Path) {
		http.Error(w, "this path is served over HTTPS only", http.StatusForbidden)
		return
	}
	w, r = s.cfg.HTTPLimits.bound(w, r)
	h.ServeHTTP(w, r)
	if d := s.cfg.HTTPLimits.WriteTimeout; d > 0 {
		// What the handler left buffered is flushed after it returns.
		http.NewResponseController(w).SetWriteDeadline(time.Now().Add(d))
	}
}

// plainPath reports whether path is one of the plain-HTTP paths.
func (s *Server) plainPath(path string) bool {
	if clean := gopath.Clean(path); clean != path && clean+"/" != path {
		return false // the mux redirects it; the clean path is checked then
	}
	for _, p := range s.plain {
		if path == p || (strings.HasSuffix(p, "/") && strings.HasPrefix(path, p)) {
			return true
		}
	}
	return false
}

// Serve opens the window and serves until ctx ends (it returns ctx's
// error) or the TTL runs out (it returns [ErrWindowExpired]): proxy-DHCP
// and TFTP with a DHCP interface, HTTP(S) with the boot scripts, assets,
// answers, first-boot scripts, webhooks, the status page, metrics and the
// timeline. It records the window in the state folder and runs the DHCP
// hook as it opens and closes. Requests already running get a few
// seconds to finish; new ones are refused at once. An error setting the
// window up (a busy port, an unreadable state folder) is returned before
// anything is served. With a state folder, Serve holds its lock
// ([window.LockName]) from before anything listens until it returns: a
// second window on the same folder gets a [*window.HeldError] naming the
// first's process and address.
func (s *Server) Serve(ctx context.Context) error {
	s.mu.Lock()
	started := s.started
	s.started = true
	s.mu.Unlock()
	if started {
		return errors.New("pxe: Serve called twice; a Server serves one window")
	}
	lock, err := s.lockStateDir()
	if err != nil {
		return err
	}
	defer lock.Unlock()
	a, err := s.assemble(ctx)
	if err != nil {
		return err
	}
	defer a.close()
	if lock != nil {
		if err := lock.Relabel(window.HolderPrefix + a.ln.Addr().String()); err != nil {
			s.log.Warn("the window lock does not name the bound address", "err", err)
		}
	}
	hs, ln := s.httpServer(ctx, a)
	now := time.Now().UTC()
	s.mu.Lock()
	s.addr, s.open, s.handler, s.nb = ln.Addr(), true, a.mux, a.netboot
	if a.tls != nil {
		// A medium's URL holds its credential: BMCs that cannot pin
		// the window's certificate fetch it over plain HTTP.
		s.plain = []string{"/boot.ipxe", "/assets/", "/ipxe/", vmedia.PathPrefix}
	}
	s.mu.Unlock()
	close(s.ready)
	s.log.Info("provisioning window open", "http", ln.Addr().String(), "ttl", s.cfg.TTL.String())

	// One slot for the HTTP server and one for each service: a failing
	// one never blocks.
	errc := make(chan error, 1+len(a.services()))
	go func() { errc <- fmt.Errorf("http server: %w", hs.Serve(ln)) }()
	// The network-boot services share a context that ends with the window.
	svcCtx, stopServices := context.WithCancel(ctx)
	var services sync.WaitGroup
	defer services.Wait()
	defer stopServices()
	for name, svc := range a.services() {
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
	done := s.opened(ctx, a, now)
	defer done()
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

// httpServer returns the window's HTTP server and the listener it
// serves: a's, held to the connections per client, and telling TLS from
// plain HTTP when a serves TLS.
func (s *Server) httpServer(ctx context.Context, a *assembly) (*http.Server, net.Listener) {
	limits := s.cfg.HTTPLimits
	ln := newClientLimitListener(a.ln, limits.MaxConnsPerClient, limits.QueueWait, func(addr netip.Addr) {
		s.log.Debug("connection refused: too many from one client", "client_ip", addr.String(), "max", limits.MaxConnsPerClient)
	})
	if a.tls != nil {
		ln = newSniffListener(ln, a.tls)
	}
	hs := &http.Server{
		Handler:           s,
		ConnState:         connStateOf(ln),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       max(limits.IdleTimeout, 0),
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	return hs, ln
}

// connStateOf is the ConnState hook of the per-client bound under ln,
// or nil.
func connStateOf(ln net.Listener) func(net.Conn, http.ConnState) {
	if sl, ok := ln.(*sniffListener); ok {
		ln = sl.inner
	}
	if cl, ok := ln.(*clientLimitListener); ok {
		return cl.ConnState
	}
	return nil
}

// lockStateDir takes the state folder for this window (nil without a
// state folder): a second window on it would overwrite the window record
// and answer the same registrations. The error is a [*window.HeldError]
// when another window holds it.
func (s *Server) lockStateDir() (*lockfile.Lock, error) {
	if s.cfg.StateDir == "" {
		return nil, nil
	}
	addr := s.cfg.HTTPAddr
	if s.cfg.Listener != nil {
		addr = s.cfg.Listener.Addr().String()
	}
	err := os.MkdirAll(s.cfg.StateDir, 0o700)
	if err != nil {
		err = &ConfigError{Field: "StateDir", Value: s.cfg.StateDir, Reason: "cannot create the state folder", Err: err}
	}
	var lock *lockfile.Lock
	if err == nil {
		lock, err = window.Lock(s.cfg.StateDir, addr)
	}
	if err != nil && s.cfg.Listener != nil {
		s.cfg.Listener.Close() // Serve closes it, also when it refuses
	}
	var ce *ConfigError
	if errors.As(err, &ce) {
		return nil, err
	}
	var held *window.HeldError
	if err != nil && !errors.As(err, &held) {
		return nil, &ConfigError{Field: "StateDir", Value: s.cfg.StateDir, Reason: "cannot lock the state folder for the window", Err: err}
	}
	return lock, err
}

func (s *Server) close() {
	s.mu.Lock()
	s.open = false
	s.mu.Unlock()
}
