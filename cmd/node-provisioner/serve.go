package main

import (
	"github.com/plasmactl/plasma-node/answer/registry"

	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/internal/cli"
	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/dhcpserver"
	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
	"github.com/plasmactl/plasma-node/pxe/tftp"
)

// serveOptions are the flags serve takes, and enable passes on to it.
type serveOptions struct {
	addr, baseURL, dhcpHook, bootFile string
	dhcpIface, serverIP, tftpAddr     string
	ipxeDir, release                  string
	tls                               bool
	ttl                               time.Duration
	keys, kernelArgs                  []string
	site                              registry.Site
}

func (o *serveOptions) bind(f *pflag.FlagSet) {
	f.StringVar(&o.addr, "http", pxe.DefaultHTTPAddr, "HTTP listen address")
	f.DurationVar(&o.ttl, "ttl", pxe.DefaultTTL, "close the window after this long")
	f.StringVar(&o.site.Domain, "domain", "", "domain of node FQDNs <name>.<domain> (default: site.json's, else "+registry.DefaultDomain+")")
	f.StringVar(&o.site.Keyboard, "keyboard", "", "installer keyboard layout (default: site.json's, else "+registry.DefaultKeyboard+")")
	f.StringVar(&o.site.Country, "country", "", "two-letter country code (default: site.json's, else "+registry.DefaultCountry+")")
	f.StringVar(&o.site.Timezone, "timezone", "", "time zone such as Europe/Vienna (default: site.json's, else "+registry.DefaultTimezone+")")
	f.StringVar(&o.site.Mailto, "mailto", "", "administrator e-mail address (default: site.json's, else root@<domain>)")
	f.StringVar(&o.baseURL, "base-url", "", "URL installers reach this server at, for first-boot and webhook URLs (default: from each request)")
	f.StringArrayVar(&o.keys, "ssh-key", nil, "public key file for every node's root authorized_keys (repeatable; default ~/.ssh/id_ed25519.pub and id_rsa.pub)")
	f.StringVar(&o.dhcpHook, "dhcp-hook", "", "command (sh -c) run when the window opens and closes, with PXE_ACTION, PXE_NEXT_SERVER, PXE_BOOT_FILE and PXE_SCRIPT_URL set, for sites that set PXE options on their own DHCP server")
	f.StringVar(&o.bootFile, "bootfile", "snponly.efi", "UEFI iPXE binary offered to UEFI clients: snponly.efi or ipxe.efi")
	f.StringVar(&o.dhcpIface, "dhcp-interface", "", "answer PXE clients with proxy-DHCP on this interface (UDP 67 and 4011) and serve TFTP; the site's DHCP server is left alone")
	f.StringVar(&o.serverIP, "server-ip", "", "this server's IPv4 address on the clients' network (default: the first IPv4 of --dhcp-interface)")
	f.StringVar(&o.tftpAddr, "tftp", "", "TFTP listen address (default <server-ip>:69 with --dhcp-interface)")
	f.StringVar(&o.release, "release", "", "staged Proxmox release to boot (default: the only one staged)")
	f.BoolVar(&o.tls, "tls", false, "serve HTTPS with the certificate in <state-dir>/tls (created on first use); answer, first-boot and webhook URLs use https, while iPXE's script, kernel and initrd stay plain HTTP on the same port")
	f.StringArrayVar(&o.kernelArgs, "kernel-arg", nil, "add this word to the installer kernel's command line in boot scripts, such as console=ttyS0,115200 (repeatable)")
	f.StringVar(&o.ipxeDir, "ipxe-dir", "/usr/lib/ipxe", "folder of the iPXE binaries (Debian's ipxe package) staged into the TFTP root")
}

func (o *serveOptions) check() error {
	if o.ttl <= 0 {
		return usageError(fmt.Errorf("--ttl %s: want a positive duration such as 2h or 30m", o.ttl))
	}
	if o.bootFile != "snponly.efi" && o.bootFile != "ipxe.efi" {
		return usageError(fmt.Errorf("--bootfile %q: want snponly.efi or ipxe.efi", o.bootFile))
	}
	for _, k := range o.kernelArgs {
		if k == "" || strings.ContainsFunc(k, func(r rune) bool { return r <= ' ' || r > '~' }) {
			return usageError(fmt.Errorf("--kernel-arg %q: want one word of printable ASCII, such as console=ttyS0,115200", k))
		}
	}
	return nil
}

// args renders the options as serve's command line, for enable.
func (o *serveOptions) args() []string {
	out := []string{"--http", o.addr, "--ttl", o.ttl.String(), "--bootfile", o.bootFile, "--ipxe-dir", o.ipxeDir}
	if o.tls {
		out = append(out, "--tls")
	}
	if o.release != "" {
		out = append(out, "--release", o.release)
	}
	for _, kv := range [][2]string{{"dhcp-interface", o.dhcpIface}, {"server-ip", o.serverIP}, {"tftp", o.tftpAddr}, {"domain", o.site.Domain}, {"keyboard", o.site.Keyboard}, {"country", o.site.Country},
		{"timezone", o.site.Timezone}, {"mailto", o.site.Mailto}, {"base-url", o.baseURL}, {"dhcp-hook", o.dhcpHook}} {
		if kv[1] != "" {
			out = append(out, "--"+kv[0], kv[1])
		}
	}
	for _, k := range o.kernelArgs {
		out = append(out, "--kernel-arg", k)
	}
	for _, k := range o.keys {
		abs, err := filepath.Abs(k)
		if err == nil {
			k = abs
		}
		out = append(out, "--ssh-key", k)
	}
	return out
}

func (a *app) serveCmd() *cobra.Command {
	var o serveOptions
	c := &cobra.Command{
		Use:   "serve [--http ADDR] [--ttl DURATION] [--domain D] [--keyboard K] [--country C] [--timezone TZ] [--mailto M]",
		Short: "Serve a provisioning window in the foreground until its TTL runs out",
		Example: `  node-provisioner serve --http :8090 --ttl 2h --domain mgmt.internal
  node-provisioner serve --dhcp-interface eth0 --tls`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.check(); err != nil {
				return err
			}
			return a.serve(cmd.Context(), o)
		},
	}
	o.bind(c.Flags())
	return c
}

func (a *app) serve(ctx context.Context, o serveOptions) error {
	reg, err := registry.Open(a.stateDir, a.log)
	if err != nil {
		return err
	}
	sec, err := registry.OpenSecretStore(a.secretsDir)
	if err != nil {
		return err
	}
	site, err := a.siteKeys(o.keys)
	if err != nil {
		return err
	}
	sitePath := filepath.Join(a.stateDir, registry.SiteFileName)
	if err := checkSite(o.site.Merge(site), sitePath); err != nil {
		return err
	}
	var cert tls.Certificate
	var fp string
	if o.tls {
		host, _, _ := net.SplitHostPort(o.addr)
		if cert, fp, err = pxe.EnsureCertificate(ctx, a.stateDir, []string{host}); err != nil {
			return err
		}
		fmt.Fprintf(a.out, "TLS certificate fingerprint (for prepare --cert-fingerprint): %s\n", fp)
	}
	h, err := answer.NewHandler(answer.HandlerConfig{
		Registry: reg, Secrets: sec, StateDir: a.stateDir, BaseURL: o.baseURL, CertFingerprint: fp, Logger: a.log,
		Site: func() (registry.Site, error) {
			s, err := registry.LoadSiteIfExists(sitePath)
			return o.site.Merge(site).Merge(s), err
		},
	})
	if err != nil {
		return err
	}
	defer h.Close()
	cfg := pxe.Config{HTTPAddr: o.addr, TTL: o.ttl, Routes: map[string]http.Handler{}, Logger: a.log}
	netboot, err := a.netboot(&cfg, o, reg)
	if err != nil {
		return err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", o.addr)
	if err != nil {
		return fmt.Errorf("--http %s: %w", o.addr, err)
	}
	cfg.Listener = ln
	switch {
	case netboot.base != "":
	case o.baseURL != "":
		netboot.base = strings.TrimSuffix(o.baseURL, "/")
	default:
		netboot.base = a.guessBase(ln.Addr())
	}
	boot, err := pxe.NewBootHandler(pxe.BootHandlerConfig{Registry: reg, StateDir: a.stateDir, BaseURL: netboot.base, Release: o.release, ExtraKernelArgs: o.kernelArgs, Logger: a.log})
	if err != nil {
		return err
	}
	for _, p := range boot.Patterns() {
		cfg.Routes[p] = boot
	}
	for _, p := range h.Patterns() {
		cfg.Routes[p] = boot.Metrics().CountAnswers(h)
	}
	if cfg.DHCP != nil {
		cfg.DHCP.OnEvent = boot.DHCPEvent
		cfg.TFTP.OnEvent = boot.TFTPEvent
	}
	if o.tls {
		cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		// iPXE cannot pin a self-signed certificate: what it fetches
		// (script, kernel, initrd, iPXE binaries) is also plain HTTP on
		// this port. The installer pins the fingerprint, so its answer,
		// first-boot script and webhook stay HTTPS only.
		cfg.PlainPaths = []string{"/boot.ipxe", "/assets/", "/ipxe/"}
	}
	srv, err := pxe.New(cfg)
	if err != nil {
		return err
	}
	a.checkReleases(ctx)
	if pending, err := reg.Pending(ctx); err == nil && len(pending) == 0 {
		a.log.Warn("no pending registrations: every request will be refused; add one with node-provisioner register")
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ctx) }()
	select {
	case err := <-errc:
		return err
	case <-srv.Ready():
	}
	now := time.Now().UTC()
	boot.Metrics().SetWindow(true, now.Add(o.ttl))
	defer boot.Metrics().SetWindow(false, time.Time{})
	scheme := "http"
	if o.tls {
		scheme = "https"
	}
	base := scheme + "://" + srv.Addr().String()
	if o.baseURL != "" {
		base = strings.TrimSuffix(o.baseURL, "/")
	}
	w := &pxe.Window{PID: os.Getpid(), Unit: os.Getenv("NODE_PROVISIONER_UNIT"), HTTP: srv.Addr().String(), URL: base + "/answer", Started: now, Deadline: now.Add(o.ttl),
		DHCPInterface: o.dhcpIface, TFTP: netboot.tftp}
	if err := pxe.WriteWindow(a.stateDir, w); err != nil {
		a.log.Error("cannot record the window; status and disable will not see it", "err", err)
	}
	defer pxe.RemoveWindow(a.stateDir, os.Getpid())
	host, _, _ := net.SplitHostPort(srv.Addr().String())
	hookCtx := context.WithoutCancel(ctx)
	if err := pxe.RunHook(hookCtx, o.dhcpHook, "enable", host, o.bootFile, base+"/boot.ipxe"); err != nil {
		a.log.Error("dhcp hook failed", "err", err)
	}
	defer func() {
		if err := pxe.RunHook(hookCtx, o.dhcpHook, "disable", host, o.bootFile, base+"/boot.ipxe"); err != nil {
			a.log.Error("dhcp hook failed", "err", err)
		}
	}()
	fmt.Fprintf(a.out, "Serving answers on %s until %s\n", w.URL, w.Deadline.Format(time.RFC3339))
	err = <-errc
	if errors.Is(err, pxe.ErrWindowExpired) || errors.Is(err, context.Canceled) {
		fmt.Fprintln(a.out, "Provisioning window closed:", err)
		return nil
	}
	return err
}

// checkSite refuses settings every answer would fail on, before the
// window opens: it builds a probe answer and validates it with the
// installer's rules.
func checkSite(flags registry.Site, sitePath string) error {
	file, err := registry.LoadSiteIfExists(sitePath)
	if err != nil {
		return usageError(err)
	}
	a, err := registry.Build(registry.Registration{Name: "probe", BootDisk: registry.BootDisk{Kind: registry.BootDiskName, Value: "sda"}},
		registry.BuildOptions{Site: flags.Merge(file), RootPassword: "probe-password"})
	if err == nil {
		err = answer.Validate(a, answer.LatestVersion)
	}
	if err != nil {
		return usageError(fmt.Errorf("site settings (flags and %s): %w", sitePath, err))
	}
	return nil
}

// checkReleases verifies the staged boot assets against their manifests
// and says what is missing.
func (a *app) checkReleases(ctx context.Context) {
	rels, err := pxe.ListReleases(ctx, a.stateDir)
	if err != nil || len(rels) == 0 {
		a.log.Warn("no boot assets staged: the answer endpoint works, network boot needs node-provisioner prepare --iso FILE", "assets", filepath.Join(a.stateDir, pxe.AssetsDir))
		return
	}
	for _, r := range rels {
		if _, err := pxe.VerifyRelease(ctx, r.Dir); err != nil {
			a.log.Error("boot assets fail their checksums; run prepare again", "release", r.Name, "err", err)
		} else {
			a.log.Info("boot assets verified", "release", r.Name)
		}
	}
}

type netbootInfo struct{ tftp, base string }

// guessBase is the boot scripts' base URL when neither --dhcp-interface,
// --server-ip nor --base-url says where machines reach this server: the
// listen address when it is a concrete one, else the host name.
func (a *app) guessBase(addr net.Addr) string {
	host, port, _ := net.SplitHostPort(addr.String())
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsUnspecified() {
		h, _ := os.Hostname()
		a.log.Warn("boot scripts name this server by its host name; give --base-url or --dhcp-interface for a concrete address", "host", h)
		host = h
	}
	return "http://" + net.JoinHostPort(host, port)
}

// netboot adds proxy-DHCP and TFTP to the window when --dhcp-interface is
// given: iPXE binaries are staged into <state-dir>/tftp, offered by
// architecture, and also served over HTTP under /ipxe/ for HTTP boot.
func (a *app) netboot(cfg *pxe.Config, o serveOptions, reg *registry.Store) (netbootInfo, error) {
	if o.dhcpIface == "" {
		if o.serverIP != "" || o.tftpAddr != "" {
			return netbootInfo{}, usageError(errors.New("--server-ip and --tftp need --dhcp-interface"))
		}
		return netbootInfo{}, nil
	}
	ip, err := netip.ParseAddr(o.serverIP)
	if o.serverIP == "" {
		if ip, err = dhcpserver.InterfaceIPv4(o.dhcpIface); err != nil {
			return netbootInfo{}, usageError(fmt.Errorf("--dhcp-interface: %w; give --server-ip", err))
		}
	}
	if err != nil || !ip.Is4() {
		return netbootInfo{}, usageError(fmt.Errorf("--server-ip %q: want this server's IPv4 address (%v)", o.serverIP, err))
	}
	_, port, err := net.SplitHostPort(o.addr)
	if err != nil || port == "0" {
		return netbootInfo{}, usageError(fmt.Errorf("--http %q: network boot needs a fixed port such as :8090", o.addr))
	}
	base := "http://" + net.JoinHostPort(ip.String(), port)
	if o.baseURL != "" {
		base = strings.TrimSuffix(o.baseURL, "/")
	}
	root := filepath.Join(a.stateDir, "tftp")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return netbootInfo{}, err
	}
	if err := pxe.StageIPXE(o.ipxeDir, root, []string{proxydhcp.BIOSBinary, proxydhcp.UEFIBinary, proxydhcp.SNPOnlyBinary}); err != nil {
		a.log.Warn("iPXE binaries missing; install Debian's ipxe package or give --ipxe-dir", "err", err)
	}
	files, err := pxe.IPXEFiles(root)
	if err != nil {
		return netbootInfo{}, err
	}
	cfg.Routes["/ipxe/"] = files
	proxy := proxydhcp.Config{ServerIP: ip, Boot: proxydhcp.BootConfig{UEFIBinary: o.bootFile, HTTPBase: base + "/ipxe", ScriptURL: base + "/boot.ipxe"}}
	if err := proxy.Validate(); err != nil {
		return netbootInfo{}, usageError(err)
	}
	tftpAddr := o.tftpAddr
	if tftpAddr == "" {
		tftpAddr = net.JoinHostPort(ip.String(), "69")
	}
	cfg.DHCP = &dhcpserver.Server{Proxy: proxy, Allow: pxe.PendingAllow(reg, 0, a.log), Interface: o.dhcpIface, Logger: a.log}
	cfg.TFTP = &tftp.Server{Root: root, Addr: tftpAddr, Logger: a.log}
	return netbootInfo{tftp: tftpAddr, base: base}, nil
}

func (a *app) enableCmd() *cobra.Command {
	var o serveOptions
	c := &cobra.Command{
		Use:   "enable [--ttl DURATION] [--http ADDR] [--bootfile snponly.efi|ipxe.efi] [--dhcp-hook CMD]",
		Short: "Open the provisioning window in the background (a transient systemd unit, or a detached process)",
		Example: `  node-provisioner enable --ttl 2h
  node-provisioner enable --http 127.0.0.1:8090 --ttl 10m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.check(); err != nil {
				return err
			}
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			argv := append([]string{exe, "--state-dir", abs(a.stateDir), "--secrets-dir", abs(a.secretsDir), "--log-format", "json", "serve"}, o.args()...)
			w, err := pxe.Enable(cmd.Context(), pxe.EnableOptions{Command: argv, StateDir: a.stateDir, TTL: o.ttl, Logger: a.log})
			if errors.Is(err, pxe.ErrWindowOpen) {
				fmt.Fprintf(a.out, "The provisioning window is already open: %s, %s left\n", w.URL, w.Left(time.Now()))
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(a.out, "Provisioning window open: %s until %s (pid %d)\n", w.URL, w.Deadline.Format(time.RFC3339), w.PID)
			return nil
		},
	}
	o.bind(c.Flags())
	return c
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func (a *app) disableCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "disable",
		Short:   "Close the provisioning window (idempotent)",
		Example: "  node-provisioner disable",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			closed, err := pxe.Disable(cmd.Context(), a.stateDir, 0)
			if err != nil {
				return err
			}
			if closed {
				fmt.Fprintln(a.out, "Provisioning window closed")
			} else {
				fmt.Fprintln(a.out, "No provisioning window was open")
			}
			return nil
		},
	}
}

func (a *app) tlsCmd() *cobra.Command {
	c := &cobra.Command{Use: "tls", Short: "The HTTPS certificate of serve --tls", Example: "  node-provisioner tls fingerprint"}
	c.AddCommand(&cobra.Command{
		Use:     "fingerprint",
		Short:   "Print the certificate's SHA-256 fingerprint in the installer's format (creating the certificate if needed)",
		Example: "  node-provisioner --state-dir /var/lib/node-provisioner tls fingerprint",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, fp, err := pxe.EnsureCertificate(cmd.Context(), a.stateDir, nil)
			if err != nil {
				return err
			}
			fmt.Fprintln(a.out, fp)
			return nil
		},
	})
	return c
}

func (a *app) prepareCmd() *cobra.Command {
	var o pxe.PrepareOptions
	var patchAsk bool
	c := &cobra.Command{
		Use:   "prepare --iso FILE [--answer-url URL] [--cert-fingerprint FP|auto] [--release NAME]",
		Short: "Stage a Proxmox VE installer ISO as boot assets (no root, no loop mount)",
		Example: `  node-provisioner prepare --iso proxmox-ve_9.2-1.iso
  node-provisioner prepare --iso proxmox-ve_9.2-1.iso --answer-url https://10.0.0.2:8090/answer --cert-fingerprint auto`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.ISO == "" {
				return usageError(errors.New("--iso is required: the Proxmox VE installer ISO to stage"))
			}
			if _, err := os.Stat(o.ISO); err != nil {
				return usageError(fmt.Errorf("--iso: %w", err))
			}
			bar := cli.NewProgress(a.errw)
			o.StateDir, o.Logger = a.stateDir, a.log
			o.Progress = func(p pxe.PrepareProgress) {
				switch p.Kind {
				case pxe.PrepareCopy:
					bar.Copy(p.Step, p.Done, p.Total, p.Finished)
				case pxe.PrepareWarning:
					bar.Line("warning: " + p.Step)
				default:
					bar.Line(p.Step)
				}
			}
			o.FingerprintFunc = func() (string, error) {
				// A certificate made now names the answer URL's host, so
				// that a client checking names (not only the pin) accepts it.
				var hosts []string
				if u, err := url.Parse(o.AnswerURL); err == nil && u.Hostname() != "" {
					hosts = []string{u.Hostname()}
				}
				_, fp, err := pxe.EnsureCertificate(cmd.Context(), a.stateDir, hosts)
				return fp, err
			}
			o.PatchAsk = patchAsk
			if reg, err := registry.Open(a.stateDir, a.log); err == nil {
				if pending, err := reg.Pending(cmd.Context()); err == nil {
					for _, r := range pending {
						if r.BootDisk.Kind == registry.BootDiskAsk {
							o.PatchAsk = true
						}
					}
				}
			}
			rel, err := pxe.Prepare(cmd.Context(), o)
			if errors.Is(err, pxe.ErrNotAutoInstallISO) {
				return usageError(err)
			}
			if err != nil {
				return err
			}
			for _, w := range rel.Warnings {
				fmt.Fprintln(a.out, "warning:", w)
			}
			fmt.Fprintf(a.out, "Staged %s in %s (%d assets", rel.Name, rel.Dir, len(rel.Assets))
			if rel.AskPatched {
				fmt.Fprint(a.out, ", console boot-disk prompt patched in")
			}
			fmt.Fprintln(a.out, ")")
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&o.ISO, "iso", "", "the Proxmox VE installer ISO (auto-install capable, 8.2 or later)")
	f.StringVar(&o.AnswerURL, "answer-url", "", "bake this answer URL into a copy of the ISO, as prepare-iso --fetch-from http does (needs xorriso)")
	f.StringVar(&o.CertFingerprint, "cert-fingerprint", "", "TLS fingerprint the installer pins for the answer URL, or auto for serve --tls's certificate")
	f.StringVar(&o.Release, "release", "", "name of the release folder (default: from the ISO)")
	f.BoolVar(&patchAsk, "patch-ask", false, "patch the console boot-disk prompt in even when no registration asks for it")
	return c
}

// errWindowClosed makes status exit 1 while no window is open.
var errWindowClosed = errors.New("the provisioning window is closed")

func (a *app) statusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show the window, the registrations and recent events; exit 0 only while the window is open",
		Example: `  node-provisioner status
  node-provisioner status >/dev/null && echo open`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			now := time.Now()
			w, err := pxe.ReadWindow(a.stateDir)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			open := err == nil && w.Open(now)
			if open {
				fmt.Fprintf(a.out, "Window:  open, %s left (pid %d", w.Left(now), w.PID)
				if w.Unit != "" {
					fmt.Fprintf(a.out, ", unit %s", w.Unit)
				}
				fmt.Fprintf(a.out, ")\nHTTP:    %s (answers at %s)\n", w.HTTP, w.URL)
				if w.DHCPInterface != "" {
					fmt.Fprintf(a.out, "DHCP:    proxy on %s\n", w.DHCPInterface)
				}
				if w.TFTP != "" {
					fmt.Fprintf(a.out, "TFTP:    %s\n", w.TFTP)
				}
			} else {
				fmt.Fprintln(a.out, "Window:  closed")
			}
			reg, err := registry.Open(a.stateDir, a.log)
			if err != nil {
				return err
			}
			st, err := registry.Status(cmd.Context(), reg, a.stateDir)
			if err != nil {
				return err
			}
			fmt.Fprintln(a.out, "Nodes:")
			if len(st) == 0 {
				fmt.Fprintln(a.out, "  (no registrations)")
			}
			for _, s := range st {
				fmt.Fprintf(a.out, "  %-16s %-9s %s\n", s.Name, s.State, strings.Join(s.MACs, ","))
			}
			evs, err := registry.ReadEvents(filepath.Join(a.stateDir, registry.EventsFileName))
			if err == nil && len(evs) > 0 {
				fmt.Fprintln(a.out, "Recent events:")
				for _, e := range evs[max(0, len(evs)-10):] {
					fmt.Fprintf(a.out, "  %s %-10s %-12s %3d %s\n", e.Time.Local().Format("15:04:05"), e.Kind, dash(e.Node), e.Status, e.Detail)
				}
			}
			if !open {
				return errWindowClosed
			}
			return nil
		},
	}
}
