package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/internal/hostport"
	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"
	"github.com/plasmactl/plasma-node/pxe/tlscert"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// DefaultAddr is where the API listens: port 8091 on every address.
const DefaultAddr = ":8091"

// shutdownGrace is how long running API requests may finish at the end.
const shutdownGrace = 5 * time.Second

// Config configures a [Daemon].
type Config struct {
	// StateDir is node-provisioner's state folder. Required.
	StateDir string
	// Addr is the API's listen address. Default [DefaultAddr]; ignored
	// when Listener is set.
	Addr string
	// Listener, when set, is used instead of listening on Addr (tests,
	// socket activation). Run closes it.
	Listener net.Listener
	// Window is the configuration of every window the daemon opens; its
	// StateDir is the daemon's, its Backend node-provisioner's over the
	// daemon's stores (opened once for the process and shared with the
	// API and power control; package pxe/backend/regbackend), its Inbox
	// theirs, its TTL the one asked for, its boot steps recorded in the
	// event log (RecordBootSteps), and its Logger the daemon's when nil.
	Window pxe.Config
	// SecretsDir is the nodes' secrets folder of a state folder's
	// stores. Default: pxe/secret's DefaultDir.
	SecretsDir string
	// Site are the settings of every answer over those of the state
	// folder's site.json.
	Site registry.Site
	// Store, a postgres:// URL, keeps the site's stores in PostgreSQL
	// (the state folder keeps the host's own); empty keeps them all in
	// the state folder. See pxe/store's Options.Store.
	Store string
	// StoreKeyFile is the secrets key of a PostgreSQL Store. Default:
	// <StateDir>/store.key.
	StoreKeyFile string
	// TLSCert and TLSKey, when set, are the files of a certificate (a
	// site CA's) and its key the API serves instead of the state
	// folder's own self-signed one; the key must be 0600. Its
	// fingerprint is in the daemon's record, where local commands read
	// it to pin.
	TLSCert, TLSKey string
	// Host names this provisioner host to the site's other hosts
	// (status lists them); default the hostname.
	Host string
	// Build is reported by the API's health endpoint.
	Build api.Build
	// Logger receives the daemon's events; nil discards them.
	Logger *slog.Logger
}

// Daemon is the long-running service. Create it with [New] and run it
// with [Daemon.Run].
type Daemon struct {
	cfg   Config
	log   *slog.Logger
	ready chan struct{}
	mu    sync.Mutex
	addr  net.Addr
	fp    string
}

// CheckAddr checks the API's listen address as [New] does: HOST:PORT,
// without looking the host up. The error wraps a bad-input sentinel.
func CheckAddr(addr string) error {
	if err := hostport.CheckListen(addr); err != nil {
		return fmt.Errorf("API address %q: %w", addr, err)
	}
	return nil
}

// New returns a daemon for cfg; it does no I/O.
func New(cfg Config) (*Daemon, error) {
	if cfg.StateDir == "" {
		return nil, errors.New("daemon: a state folder is required")
	}
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if err := CheckAddr(cfg.Addr); err != nil {
		return nil, err
	}
	// Every window the daemon opens answers with these settings: refused
	// now, as a window of its own refuses them, rather than at each open.
	if _, err := regbackend.CheckSite(cfg.StateDir, cfg.Site); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Window.Logger == nil {
		cfg.Window.Logger = log
	}
	cfg.Window.StateDir = cfg.StateDir
	cfg.Window.RecordBootSteps = true // the event stream shows the boot
	return &Daemon{cfg: cfg, log: log, ready: make(chan struct{})}, nil
}

// Ready is closed once the API listens.
func (d *Daemon) Ready() <-chan struct{} { return d.ready }

// Addr returns the API's bound address once it listens, else nil.
func (d *Daemon) Addr() net.Addr {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.addr
}

// Fingerprint returns the API certificate's SHA-256 fingerprint once it
// listens.
func (d *Daemon) Fingerprint() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fp
}

// Run serves the API until ctx ends, following the site's window (see
// the package doc): it serves the window while it is open, also one
// recorded as open before it started. It then stops serving (keeping
// the site's record, so that the next start, and the site's other
// hosts, go on with it) and returns nil. While it serves, the daemon is
// recorded in the state folder (see [Running]); the record goes when Run
// returns. A second daemon on the same state folder gets an error
// wrapping [ErrRunning]. An error setting up (the state
// folder, the certificate, a busy port) is returned before anything is
// served.
func (d *Daemon) Run(ctx context.Context) error {
	ln := d.cfg.Listener
	defer func() {
		if ln != nil {
			ln.Close()
		}
	}()
	stores, err := store.Open(ctx, d.cfg.StateDir, store.Options{SecretsDir: d.cfg.SecretsDir, Store: d.cfg.Store, KeyFile: d.cfg.StoreKeyFile, Openers: postgres.Openers(), Logger: d.log})
	if err != nil {
		return err
	}
	defer stores.Close()
	replies, err := stores.Replies()
	if err != nil {
		return err
	}
	tokens, err := stores.Tokens()
	if err != nil {
		return err
	}
	if f, ok := tokens.(apitoken.Flusher); ok {
		defer f.Flush() // the last-used times kept in memory
	}
	lk, err := lockRunning(ctx, d.cfg.StateDir)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	// Commands on this state folder find the API by the record (see
	// [Running]); it goes after the window has stopped, before the lock.
	defer func() {
		if err := removeRunning(d.cfg.StateDir, os.Getpid()); err != nil {
			d.log.Warn("cannot remove the daemon's record", "err", err)
		}
	}()
	cert, fp, err := d.certificate(ctx)
	if err != nil {
		return err
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	// One event store for the process: the windows, power control and
	// the API's stream share it, so events reach the stream at once.
	evs := stores.Events()
	wcfg := d.cfg.Window
	win := newWindows(ctx, d.cfg.StateDir, stores.SiteWindow(), window.Host{Name: d.host()}, wcfg, d.log)
	// Each window answers from a backend over the daemon's stores: the
	// windows open no store of their own.
	win.stores, win.siteSettings = stores, d.cfg.Site
	defer win.shutdown()
	pw := newBMCs(stores, evs, d.log)
	secrets, err := stores.Secrets(ctx)
	if err != nil {
		return err
	}
	installs, err := stores.Installs()
	if err != nil {
		return err
	}
	inbox, err := stores.Discovered()
	if err != nil {
		return err
	}
	site, err := registry.LoadSiteIfExists(filepath.Join(d.cfg.StateDir, registry.SiteFileName))
	if err != nil {
		return err
	}
	siteSecrets, err := stores.SiteSecrets(ctx)
	if err != nil {
		return err
	}
	h, err := api.New(api.Config{SiteSecrets: siteSecrets, Registry: stores.Registrations(), Secrets: secrets, Tokens: tokens, Replies: replies, Windows: win, Pages: win, Power: pw, Events: evs, Installs: installs, Inbox: inbox,
		Rules: stores.Rules(), Site: d.cfg.Site.Merge(site), Build: d.cfg.Build, Logger: d.log})
	if err != nil {
		return err
	}
	if ln == nil {
		if ln, err = net.Listen("tcp", d.cfg.Addr); err != nil {
			return fmt.Errorf("api listen %s: %w", d.cfg.Addr, err)
		}
	}
	hs := &http.Server{
		Handler:           h,
		TLSConfig:         tlscert.ServerTLSConfig(cert),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(d.log.Handler(), slog.LevelWarn),
	}
	if err := writeRunning(d.cfg.StateDir, Record{PID: os.Getpid(), Addr: ln.Addr().String(), Started: time.Now().UTC(), Fingerprint: fp}); err != nil {
		return err
	}
	if err := lk.Relabel(runningHolder + ln.Addr().String()); err != nil {
		return err
	}
	d.mu.Lock()
	d.addr, d.fp = ln.Addr(), fp
	d.mu.Unlock()
	win.host.API = ln.Addr().String()
	win.reconcile(ctx) // rejoin the site's window before the API answers
	fctx, fstop := context.WithCancel(ctx)
	followed := make(chan struct{})
	go func() { defer close(followed); win.follow(fctx) }()
	defer func() { fstop(); <-followed }() // before the window's shutdown
	errc := make(chan error, 1)
	served := ln
	ln = nil // ServeTLS closes it
	go func() { errc <- hs.ServeTLS(served, "", "") }()
	close(d.ready)
	d.log.Info("management API listening", "addr", served.Addr().String(), "cert_fingerprint", fp)
	select {
	case err := <-errc:
		return fmt.Errorf("api server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	d.log.Info("management API stopped")
	return nil
}

// host is the name of this host: [Config].Host, else the hostname.
func (d *Daemon) host() string {
	if d.cfg.Host != "" {
		return d.cfg.Host
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "(unnamed host)"
}

// certificate is the API's: the site's (TLSCert and TLSKey) when given,
// else the state folder's own, made on first use.
func (d *Daemon) certificate(ctx context.Context) (tls.Certificate, string, error) {
	switch {
	case d.cfg.TLSCert != "" && d.cfg.TLSKey != "":
		return tlscert.LoadCertificate(d.cfg.TLSCert, d.cfg.TLSKey)
	case d.cfg.TLSCert != "" || d.cfg.TLSKey != "":
		return tls.Certificate{}, "", errors.New("daemon: a TLS certificate needs its key and a key its certificate")
	}
	return tlscert.EnsureCertificate(ctx, d.cfg.StateDir, nil)
}
