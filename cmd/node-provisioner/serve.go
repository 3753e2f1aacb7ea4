package main

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/plasmactl/plasma-node/internal/cli"
	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/daemon"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// serveOptions are the flags serve takes, and enable passes on to it.
type serveOptions struct {
	cfg                 pxe.Config
	site                registry.Site // over site.json's, for every answer
	serverIP, serverIP6 string
	keys                []string
}

func (o *serveOptions) bind(f *pflag.FlagSet) {
	cli.DurationVar(f, &o.cfg.TTL, "ttl", pxe.DefaultTTL, "close the window after this long")
	o.bindWindow(f)
}

// bindWindow binds the window's settings but its TTL: the daemon takes
// the TTL from each request to open.
func (o *serveOptions) bindWindow(f *pflag.FlagSet) {
	c, site := &o.cfg, &o.site
	f.StringVar(&c.HTTPAddr, "http", pxe.DefaultHTTPAddr, "HTTP listen address")
	f.StringVar(&site.Domain, "domain", "", "domain of node FQDNs <name>.<domain> (default: site.json's, else "+registry.DefaultDomain+")")
	f.StringVar(&site.Keyboard, "keyboard", "", "installer keyboard layout (default: site.json's, else "+registry.DefaultKeyboard+")")
	f.StringVar(&site.Country, "country", "", "two-letter country code (default: site.json's, else "+registry.DefaultCountry+")")
	f.StringVar(&site.Timezone, "timezone", "", "time zone such as Europe/Vienna (default: site.json's, else "+registry.DefaultTimezone+")")
	f.StringVar(&site.Mailto, "mailto", "", "administrator e-mail address (default: site.json's, else root@<domain>)")
	f.StringVar(&c.BaseURL, "base-url", "", "URL installers reach this server at, for first-boot and webhook URLs (default: from each request)")
	f.StringArrayVar(&o.keys, "ssh-key", nil, "public key file for every node's root authorized_keys (repeatable; default ~/.ssh/id_ed25519.pub and id_rsa.pub)")
	f.StringVar(&c.DHCPHook, "dhcp-hook", "", "command (sh -c) run when the window opens and closes, with PXE_ACTION, PXE_NEXT_SERVER, PXE_BOOT_FILE and PXE_SCRIPT_URL set, for sites that set PXE options on their own DHCP server")
	f.StringVar(&c.BootFile, "bootfile", pxe.DefaultBootFile, "UEFI iPXE binary offered to UEFI clients: snponly.efi or ipxe.efi")
	f.StringVar(&c.DHCPInterface, "dhcp-interface", "", "answer PXE clients with proxy-DHCP on this interface (UDP 67 and 4011) and serve TFTP; the site's DHCP server is left alone")
	f.StringVar(&o.serverIP, "server-ip", "", "this server's IPv4 address on the clients' network (default: the first IPv4 of --dhcp-interface)")
	f.StringVar(&o.serverIP6, "server-ip6", "", "this server's global or unique-local IPv6 address on the clients' network, for DHCPv6 boot answers and IPv6 boot URLs (default: the first such address of --dhcp-interface)")
	f.StringVar(&c.TFTPAddr, "tftp", "", "TFTP listen address (default <server-ip>:69 with --dhcp-interface)")
	f.IntVar(&c.TFTPMaxTransfers, "tftp-max-transfers", pxe.DefaultTFTPMaxTransfers, "TFTP transfers running at once; at the bound a new request replaces the transfer stalled longest, or waits for a place")
	f.IntVar(&c.TFTPMaxTransfersPerClient, "tftp-max-per-client", pxe.DefaultTFTPMaxTransfersPerClient, "TFTP transfers one client (an IPv4 or IPv6 address; an IPv6 /64 together 8 times as many) runs at once; more wait for a place")
	f.StringVar(&c.Release, "release", "", "staged Proxmox release to boot (default: the only one staged)")
	f.BoolVar(&c.TLS, "tls", false, "serve HTTPS with the certificate in <state-dir>/tls (created on first use); answer, first-boot and webhook URLs use https, while iPXE's script, kernel and initrd stay plain HTTP on the same port")
	f.StringArrayVar(&c.KernelArgs, "kernel-arg", nil, "add this word to the installer kernel's command line in boot scripts, such as console=ttyS0,115200 (repeatable)")
	f.BoolVar(&c.Discover, "discover", false, "boot machines no registration knows into discovery: the release's kernel with the discovery initrd reports their NICs, DMI and disks (see discovered) and powers them off; refused while an unpinned registration is pending")
	f.BoolVar(&c.SecureBoot, "secure-boot", false, "offer UEFI machines the Secure Boot chain (signed shim, grub and kernel) that prepare staged with the release, instead of iPXE")
	f.StringVar(&c.IPXEDir, "ipxe-dir", pxe.DefaultIPXEDir, "folder of the iPXE binaries (Debian's ipxe package) staged into the TFTP root")
}

// check parses what the flags hold beyond pflag's types and makes the
// window's configuration, which New checks.
func (o *serveOptions) check() (*pxe.Server, error) {
	if err := o.parse(); err != nil {
		return nil, err
	}
	s, err := pxe.New(o.cfg)
	return s, flagError(err)
}

// parse parses what the flags hold beyond pflag's types.
func (o *serveOptions) parse() error {
	if err := window.CheckTTL(o.cfg.TTL); err != nil {
		return usageError(fmt.Errorf("--ttl %s: %s", o.cfg.TTL, window.TTLRule))
	}
	if err := registry.ValidateDomain(o.site.Domain); err != nil {
		return usageError(fmt.Errorf("--domain: %w", err))
	}
	if o.serverIP != "" {
		ip, err := netip.ParseAddr(o.serverIP)
		if err != nil || !ip.Is4() {
			return usageError(fmt.Errorf("--server-ip %q: want this server's IPv4 address", o.serverIP))
		}
		o.cfg.ServerIP = ip
	}
	if o.serverIP6 != "" {
		ip, err := netip.ParseAddr(o.serverIP6)
		if err != nil || !ip.Is6() || ip.Is4In6() {
			return usageError(fmt.Errorf("--server-ip6 %q: want this server's global or unique-local IPv6 address, such as 2001:db8::2", o.serverIP6))
		}
		o.cfg.ServerIP6 = ip
	}
	return nil
}

func (a *app) serveCmd() *cobra.Command {
	var o serveOptions
	c := &cobra.Command{
		Use:   "serve [--http ADDR] [--ttl DURATION] [--domain D] [--keyboard K] [--country C] [--timezone TZ] [--mailto M]",
		Short: "Serve a provisioning window in the foreground until its TTL runs out",
		Example: `  node-provisioner serve --http :8090 --ttl 2h --domain mgmt.internal
  node-provisioner serve --dhcp-interface eth0 --tls`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.serve(cmd.Context(), o) },
	}
	o.bind(c.Flags())
	return c
}

// serve runs one window (daemon.Serve: node-provisioner's backend over
// the stores), printing where it serves and why it closed.
func (a *app) serve(ctx context.Context, o serveOptions) error {
	// Bad flags first: a usage error comes before any warning.
	o.cfg.StateDir, o.cfg.Logger = a.stateDir, a.log
	if _, err := o.check(); err != nil {
		return err
	}
	keys, err := a.siteKeys(o.keys)
	if err != nil {
		return err
	}
	stores, err := a.stores(ctx)
	if err != nil {
		return err
	}
	o.cfg.RecordBootSteps = true // status --watch follows the boot in the event log, as with the daemon
	o.cfg.OnOpen = func(w *window.Record) {
		if w.CertFingerprint != "" {
			fmt.Fprintf(a.out, "TLS certificate fingerprint (for prepare --cert-fingerprint): %s\n", w.CertFingerprint)
		}
		fmt.Fprintf(a.out, "Serving answers on %s until %s\n", w.URL, w.Deadline.Format(time.RFC3339))
	}
	err = flagError(daemon.Serve(ctx, stores, o.cfg, o.site.Merge(keys), a.log))
	if errors.Is(err, pxe.ErrWindowExpired) || errors.Is(err, context.Canceled) {
		fmt.Fprintln(a.out, "Provisioning window closed:", err)
		return nil
	}
	return err
}
