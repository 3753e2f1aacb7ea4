package pxe

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/bootassets"
	"github.com/plasmactl/plasma-node/pxe/dhcpserver"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/netboot"
	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
	"github.com/plasmactl/plasma-node/pxe/tftp"
	"github.com/plasmactl/plasma-node/pxe/tlscert"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// TFTPDirName is the folder of the state folder that is the TFTP root,
// where the iPXE binaries are staged.
const TFTPDirName = "tftp"

// assembly is what Serve runs: the parts of one window, set up and
// checked before anything is served.
type assembly struct {
	ln  net.Listener
	tls *tls.Config
	fp  string
	// pin is the certificate's public key pin, for the first-boot
	// script's report (curl --pinnedpubkey).
	pin     string
	mux     http.Handler
	netboot *netboot.Handler
	dhcp    *dhcpserver.Server
	tftp    *tftp.Server
	// dhcp6 and tftp6 boot machines over IPv6, when the DHCP interface
	// has a global or unique-local IPv6 address.
	dhcp6 *dhcpserver.Server6
	tftp6 *tftp.Server
	// scriptBase is the URL of boot scripts, scriptBase6 that for IPv6
	// clients on a dual-stack segment; answerURL where installers post.
	scriptBase, scriptBase6, answerURL string
	// mediaInstaller is the version of the release virtual media are
	// made of; "" when none is.
	mediaInstaller string
	closers        []func() error
}

func (a *assembly) close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
}

func (a *assembly) services() map[string]interface{ Serve(context.Context) error } {
	out := map[string]interface{ Serve(context.Context) error }{}
	if a.dhcp != nil {
		out["dhcp"] = a.dhcp
	}
	if a.tftp != nil {
		out["tftp"] = a.tftp
	}
	if a.dhcp6 != nil {
		out["dhcpv6"] = a.dhcp6
		out["tftp6"] = a.tftp6
	}
	return out
}

// assemble sets the window up: the backend, the certificate, the
// listener, the network-boot servers and the HTTP routes. On error it
// has closed what it opened.
func (s *Server) assemble(ctx context.Context) (a *assembly, err error) {
	a = &assembly{}
	defer func() {
		if err != nil {
			a.close()
		}
	}()
	cfg := &s.cfg
	b := cfg.Backend
	// A Config may be checked by New before its backend exists (the
	// daemon's, whose windows each get one): Serve needs it.
	if b == nil && (cfg.DHCPInterface != "" || cfg.Discover || cfg.SecureBoot) {
		return a, &ConfigError{Field: "Backend", Reason: "a window that boots machines needs a backend to ask (node-provisioner's: regbackend.Open over its stores)"}
	}
	if cfg.Discover && cfg.Inbox == nil {
		return a, &ConfigError{Field: "Inbox", Reason: "a discovery window keeps its reports in an inbox; give one (the state folder's stores have one)"}
	}
	if st, ok := b.(backend.Starter); ok {
		if err := st.Start(ctx); err != nil {
			return a, fmt.Errorf("start the backend: %w", err)
		}
	}
	if cfg.TLS {
		host, _, _ := net.SplitHostPort(cfg.HTTPAddr)
		cert, fp, err := tlscert.EnsureCertificate(ctx, cfg.StateDir, []string{host})
		if err != nil {
			return a, err
		}
		if a.pin, err = tlscert.PublicKeyPin(cert.Certificate[0]); err != nil {
			return a, err
		}
		a.tls, a.fp = tlscert.ServerTLSConfig(cert), fp
	}
	a.ln = cfg.Listener
	if a.ln == nil {
		var lc net.ListenConfig
		if a.ln, err = lc.Listen(ctx, "tcp", cfg.HTTPAddr); err != nil {
			return a, &ConfigError{Field: "HTTPAddr", Value: cfg.HTTPAddr, Reason: "cannot listen", Err: err}
		}
	}
	a.closers = append(a.closers, func() error { return a.ln.Close() })
	scheme := "http"
	if a.tls != nil {
		scheme = "https"
	}
	a.answerURL = scheme + "://" + a.ln.Addr().String() + "/answer"
	if cfg.BaseURL != "" {
		a.answerURL = strings.TrimSuffix(cfg.BaseURL, "/") + "/answer"
	}
	mux := http.NewServeMux()
	for pattern, h := range cfg.Routes {
		if err := register(mux, pattern, h); err != nil {
			return a, err
		}
	}
	a.mux = mux
	if b == nil {
		return a, nil
	}
	if err := s.setupNetboot(ctx, a, b); err != nil {
		return a, err
	}
	if err := register(mux, "/", a.netboot); err != nil {
		return a, err
	}
	if err := s.setupMedia(ctx, a, b, mux); err != nil {
		return a, err
	}
	return a, nil
}

func register(mux *http.ServeMux, pattern string, h http.Handler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &ConfigError{Field: "Routes", Value: pattern, Reason: fmt.Sprint(r)}
		}
	}()
	mux.Handle(pattern, h)
	return nil
}

// netboot sets up the boot side: the script base URL, with a DHCP
// interface the proxy-DHCP and TFTP servers and the staged iPXE
// binaries, and the HTTP handler asking b.
func (s *Server) setupNetboot(ctx context.Context, a *assembly, b backend.Backend) error {
	cfg := &s.cfg
	_, port, _ := net.SplitHostPort(a.ln.Addr().String())
	base := ""
	var ipxeDir string
	if cfg.DHCPInterface != "" {
		ip := cfg.ServerIP
		var err4 error
		if !ip.IsValid() {
			ip, err4 = dhcpserver.InterfaceIPv4(cfg.DHCPInterface)
		}
		// An IPv6-only segment's window has no IPv4 address there: it
		// boots over DHCPv6 alone.
		ip6, mac6, err6 := dhcpserver.InterfaceIPv6(cfg.DHCPInterface)
		if cfg.ServerIP6.IsValid() {
			ip6, err6 = cfg.ServerIP6, nil
		}
		if err4 != nil && err6 != nil {
			return &ConfigError{Field: "ServerIP", Reason: "give this server's IPv4 address on the clients' network, or give the interface a global or unique-local IPv6 address", Err: err4}
		}
		if err4 != nil {
			ip = netip.Addr{}
		}
		if err6 != nil {
			ip6 = netip.Addr{}
		}
		base, a.scriptBase6 = scriptBases(cfg.BaseURL, ip, ip6, port)
		if cfg.StateDir == "" {
			return &ConfigError{Field: "StateDir", Reason: "network boot stages the iPXE binaries in the state folder; give one"}
		}
		ipxeDir = filepath.Join(cfg.StateDir, TFTPDirName)
		if err := os.MkdirAll(ipxeDir, 0o755); err != nil {
			return fmt.Errorf("tftp root: %w", err)
		}
		if err := bootassets.StageIPXE(cfg.IPXEDir, ipxeDir, []string{proxydhcp.BIOSBinary, proxydhcp.UEFIBinary, proxydhcp.SNPOnlyBinary}); err != nil {
			s.log.Warn("iPXE binaries missing; install Debian's ipxe package or give the folder that has them", "err", err)
		}
		if _, err := s.stageSecureBoot(ctx, ipxeDir); err != nil {
			return err
		}
		boot := proxydhcp.BootConfig{UEFIBinary: cfg.BootFile, HTTPBase: base + "/ipxe", ScriptURL: base + "/boot.ipxe", SecureBoot: cfg.SecureBoot}
		if sb, ok := b.(backend.SecureBooter); ok && !cfg.SecureBoot {
			boot.SecureBootFor = sb.SecureBoot
		}
		allow := b.Allow
		if cfg.Discover {
			allow = allowEveryMachine
		}
		if err4 == nil {
			proxy := proxydhcp.Config{ServerIP: ip, Boot: boot}
			if err := proxy.Validate(); err != nil {
				return &ConfigError{Field: "DHCPInterface", Value: cfg.DHCPInterface, Reason: "cannot offer boot files", Err: err}
			}
			tftpAddr := cfg.TFTPAddr
			if tftpAddr == "" {
				tftpAddr = net.JoinHostPort(ip.String(), "69")
			}
			a.dhcp = &dhcpserver.Server{Proxy: proxy, Allow: allow, Interface: cfg.DHCPInterface, DHCPConn: cfg.DHCPConn, PXEConn: cfg.PXEConn, Logger: s.log}
			a.tftp = &tftp.Server{Root: ipxeDir, Addr: tftpAddr, Conn: cfg.TFTPConn, Logger: s.log,
				MaxTransfers: cfg.TFTPMaxTransfers, MaxTransfersPerClient: cfg.TFTPMaxTransfersPerClient}
			if s.tweakDHCP != nil {
				s.tweakDHCP(a.dhcp)
			}
		}
		if err6 == nil {
			if err := s.setupDHCPv6(a, ip6, mac6, cmp.Or(a.scriptBase6, base), boot, allow, ipxeDir); err != nil {
				return err
			}
		}
	} else {
		if port == "0" || port == "" {
			port = "8090"
		}
		base = cfg.BaseURL
		if base == "" {
			base = s.guessBase(a.ln.Addr())
		}
	}
	a.scriptBase = strings.TrimSuffix(base, "/")
	assets := ""
	if cfg.StateDir != "" {
		assets = filepath.Join(cfg.StateDir, bootassets.AssetsDir)
		s.checkReleases(ctx)
	}
	metrics := &netboot.Metrics{}
	w := s.eventWriter(b, metrics)
	var record func(context.Context, backend.Event) error
	if w != nil {
		a.closers = append(a.closers, w.Close)
		record = func(ctx context.Context, e backend.Event) error { return w.Append(ctx, e) }
	}
	var disc *netboot.Discovery
	if cfg.Discover {
		var err error
		if disc, err = s.discoveryOf(); err != nil {
			return err
		}
	}
	h, err := netboot.New(netboot.Config{
		Discovery: disc, Backend: b, BaseURL: a.scriptBase, BaseURL6: a.scriptBase6, Timeline: s.bootSteps(w), AnswerBaseURL: cfg.BaseURL, CertFingerprint: a.fp, CertPin: a.pin,
		AssetsDir: assets, Release: cfg.Release, ExtraKernelArgs: cfg.KernelArgs, IPXEDir: ipxeDir, Logger: s.log,
		AnswerTokens: s.answerTokens, Metrics: metrics, Record: record,
	})
	if err != nil {
		return &ConfigError{Field: "BaseURL", Value: a.scriptBase, Reason: "cannot serve boot scripts", Err: err}
	}
	if err := h.LoadHistory(ctx); err != nil {
		s.log.Warn("earlier events are not on the page", "err", err)
	}
	s.followBMC(ctx, a, b, h)
	a.netboot = h
	if a.dhcp != nil {
		a.dhcp.OnEvent = func(e dhcpserver.Event) { h.Net(dhcpEvent(e)) }
	}
	if a.dhcp6 != nil {
		a.dhcp6.OnEvent = func(e dhcpserver.Event) { h.Net(dhcpEvent(e)) }
	}
	for _, t := range []*tftp.Server{a.tftp, a.tftp6} {
		if t != nil {
			t.OnEvent = func(e tftp.Event) { h.Net(tftpEvent(e)) }
			t.Files = h.TFTPFile
		}
	}
	return nil
}

// followBMC puts the BMC actions other processes record in the event
// log (node-provisioner power and boot, the daemon's API) on the page as
// they happen, while the window is open: the window records the boot
// steps itself, not those.
func (s *Server) followBMC(ctx context.Context, a *assembly, b backend.Backend, h *netboot.Handler) {
	f, ok := b.(events.KindFollower)
	if !ok || h.Timeline() == nil {
		return
	}
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	a.closers = append(a.closers, func() error { cancel(); <-done; return nil })
	go func() {
		defer close(done)
		// Only BMC lines are decoded: the window's own boot steps, which
		// a storm writes by the thousand, are passed over.
		err := f.FollowKinds(fctx, events.FromNow, []events.Kind{events.BMC}, func(r events.Record) error {
			h.Timeline().Ingest(r.Event)
			return nil
		})
		if err != nil && fctx.Err() == nil {
			s.log.Warn("BMC actions are not followed on the page", "err", err)
		}
	}()
}

// answerTokens returns the answer tokens of the staged release the window
// boots (Config.Release), or of every staged release when it names none:
// an installer of any of them may ask. A release whose token is missing
// is an error, so answers are refused rather than served unchecked.
func (s *Server) answerTokens(ctx context.Context) ([]string, error) {
	if s.cfg.StateDir == "" {
		return nil, nil
	}
	releases := []string{s.cfg.Release}
	if s.cfg.Release == "" {
		var err error
		if releases, err = bootassets.StagedReleases(ctx, s.cfg.StateDir); err != nil {
			return nil, err
		}
	}
	var tokens []string
	for _, r := range releases {
		t, err := bootassets.AnswerToken(ctx, s.cfg.StateDir, r)
		if err != nil {
			return nil, err
		}
		if t != "" {
			tokens = append(tokens, t)
		}
	}
	return tokens, nil
}

// dhcpEvent is a proxy-DHCP event as the timeline takes it.
func dhcpEvent(e dhcpserver.Event) netboot.NetEvent {
	return netboot.NetEvent{Time: e.Time, Kind: e.Kind, MAC: e.MAC, Arch: e.Arch, Peer: e.Peer, File: e.File}
}

// tftpEvent is a TFTP event as the timeline takes it.
func tftpEvent(e tftp.Event) netboot.NetEvent {
	return netboot.NetEvent{Time: e.Time, Kind: e.Kind, Peer: e.Peer, File: e.File, Bytes: e.Bytes}
}

// guessBase is the boot scripts' base URL when neither a DHCP interface
// nor a base URL says where machines reach this server: the listen
// address when it is a concrete one, else the host name.
func (s *Server) guessBase(addr net.Addr) string {
	host, port, _ := net.SplitHostPort(addr.String())
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsUnspecified() {
		h, _ := os.Hostname()
		s.log.Warn("boot scripts name this server by its host name; give a base URL or a DHCP interface for a concrete address", "host", h)
		host = h
	}
	return "http://" + net.JoinHostPort(host, port)
}

// checkReleases verifies the staged boot assets against their manifests
// and logs what is missing.
func (s *Server) checkReleases(ctx context.Context) {
	if toks, err := s.answerTokens(ctx); err == nil && len(toks) == 0 {
		s.log.Warn("answers are served without an answer token: whoever reaches the window and names a pending machine's MAC or serial gets its answer; prepare a 9.2 ISO with a token (the default)")
	}
	rels, err := bootassets.ListReleases(ctx, s.cfg.StateDir)
	if err != nil || len(rels) == 0 {
		s.log.Warn("no boot assets staged: the answer endpoint works, network boot needs node-provisioner prepare",
			"assets", filepath.Join(s.cfg.StateDir, bootassets.AssetsDir))
		return
	}
	for _, r := range rels {
		if _, err := bootassets.VerifyRelease(ctx, r.Dir); err != nil {
			s.log.Error("boot assets fail their checksums; prepare them again", "release", r.Name, "err", err)
		} else {
			s.log.Info("boot assets verified", "release", r.Name)
		}
	}
}

// opened does what follows the window's opening: the metrics' window,
// the record in the state folder, the DHCP hook and OnOpen. It returns
// what undoes them as the window closes.
func (s *Server) opened(ctx context.Context, a *assembly, now time.Time) (done func()) {
	cfg := &s.cfg
	w := &window.Record{PID: os.Getpid(), Unit: os.Getenv(unitEnv), HTTP: a.ln.Addr().String(), URL: a.answerURL, Started: now, CertFingerprint: a.fp, SecureBoot: cfg.SecureBoot, Discover: cfg.Discover, MediaInstaller: a.mediaInstaller}
	if cfg.TTL > 0 {
		w.Deadline = now.Add(cfg.TTL)
	}
	if a.dhcp != nil {
		w.DHCPInterface, w.TFTP = cfg.DHCPInterface, a.tftp.Addr
	}
	if a.netboot != nil {
		a.netboot.Metrics().SetWindow(true, w.Deadline)
	}
	recorded := false
	if cfg.StateDir != "" {
		if err := window.Write(cfg.StateDir, w); err != nil {
			s.log.Error("cannot record the window; status and disable will not see it", "err", err)
		} else {
			recorded = true
		}
	}
	hookCtx := context.WithoutCancel(ctx)
	host, _, _ := net.SplitHostPort(w.HTTP)
	if a.dhcp != nil {
		host = a.dhcp.Proxy.ServerIP.String()
	}
	bootFile := cfg.BootFile
	if cfg.SecureBoot {
		bootFile = proxydhcp.ShimBinary // the site's DHCP offers the chain's first stage
	}
	hook := func(action string) {
		if err := runHook(hookCtx, cfg.DHCPHook, action, host, bootFile, a.scriptBase+"/boot.ipxe"); err != nil {
			s.log.Error("dhcp hook failed", "err", err)
		}
	}
	hook("enable")
	if cfg.OnOpen != nil {
		cfg.OnOpen(w)
	}
	return func() {
		hook("disable")
		if recorded {
			if err := window.Remove(cfg.StateDir, w.PID); err != nil && !errors.Is(err, os.ErrNotExist) {
				s.log.Warn("cannot remove the window record", "err", err)
			}
		}
		if a.netboot != nil {
			a.netboot.Metrics().SetWindow(false, time.Time{})
		}
	}
}
