package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/bootassets"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/sitepublish"
	"github.com/plasmactl/plasma-node/pxe/tlscert"
)

func (a *app) publishCmd() *cobra.Command {
	var answerURL, fp, domain, format, ipv6Boot string
	c := &cobra.Command{
		Use:   "publish [--answer-url URL] [--cert-fingerprint FP|none] [--search-domain D] [--format all|dnsmasq|kea|opnsense|zone|dnsmasq-txt] [--ipv6-boot WINDOW-URL]",
		Short: "Print what the site's DHCP server or DNS publishes so that a generic ISO (prepare --generic) finds the window",
		Long: "Print the DHCP options 250 (answer URL) and 251 (certificate fingerprint) for dnsmasq, ISC Kea and OPNsense,\n" +
			"and the DNS TXT records proxmox-auto-installer.<search-domain> and proxmox-auto-installer-cert-fingerprint.<search-domain>.\n" +
			"The installer reads them from its own DHCP lease, which the site's DHCP server gives: the proxy-DHCP does not.",
		Example: `  node-provisioner publish
  node-provisioner publish --answer-url https://10.0.0.2:8090/answer --search-domain site.example --format dnsmasq
  node-provisioner publish --ipv6-boot http://[2001:db8::2]:8090 --format kea`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("ipv6-boot") {
				return a.printIPv6Boot(ipv6Boot, format)
			}
			f := sitepublish.Format("")
			if format != "all" {
				var err error
				if f, err = sitepublish.ParseFormat(format); err != nil {
					return usageError(fmt.Errorf("--format: %w", err))
				}
			}
			if fp == "none" {
				fp = ""
			} else if !cmd.Flags().Changed("cert-fingerprint") {
				fp = "auto"
			}
			rec, err := a.siteRecords(cmd.Context(), answerURL, fp, domain)
			if err != nil {
				return err
			}
			text := rec.All()
			if f != "" {
				text, _ = rec.Text(f)
			}
			fmt.Fprint(a.out, text)
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVar(&answerURL, "answer-url", "", "the answer URL to publish (default: the open window's)")
	fl.StringVar(&fp, "cert-fingerprint", "", "the answer server's certificate fingerprint to publish, or none (default: the open window's, else for https the state folder's certificate)")
	fl.StringVar(&domain, "search-domain", "", "the search domain the site's DHCP server hands out, under which the TXT records live (default: site.json's domain, else "+registry.DefaultDomain+")")
	fl.StringVar(&format, "format", "all", "all, or one of "+formatNames())
	fl.StringVar(&ipv6Boot, "ipv6-boot", "", "print instead what the site's DHCPv6 server gives iPXE on an IPv6 segment: the window's base URL there, such as http://[2001:db8::2]:8090")
	return c
}

func formatNames() string {
	names := make([]string, len(sitepublish.Formats))
	for i, f := range sitepublish.Formats {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// siteRecords checks what publish prints: answerURL, else the open
// window's; fp "auto" takes the window's fingerprint with its URL, else
// for https the state folder's certificate's, if it has one; domain, else
// site.json's, else registry.DefaultDomain.
func (a *app) siteRecords(ctx context.Context, answerURL, fp, domain string) (sitepublish.Records, error) {
	if answerURL == "" {
		w, err := a.openWindow(ctx)
		if err != nil {
			return sitepublish.Records{}, err
		}
		if !w.Open || w.URL == "" {
			return sitepublish.Records{}, usageError(errors.New("--answer-url: no window is open on this state folder to take it from; give the URL the window serves answers on (serve prints it)"))
		}
		answerURL = w.URL
		if fp == "auto" {
			fp = w.CertFingerprint
		}
	}
	if fp == "auto" {
		fp = ""
		if strings.HasPrefix(answerURL, "https://") {
			got, err := tlscert.ReadFingerprint(a.stateDir)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return sitepublish.Records{}, err
			}
			fp = got
		}
	}
	if domain == "" {
		domain = a.siteDomain()
	}
	rec, err := sitepublish.New(answerURL, fp, domain)
	switch {
	case errors.Is(err, sitepublish.ErrAnswerURL):
		return rec, usageError(fmt.Errorf("--answer-url: %w", err))
	case errors.Is(err, sitepublish.ErrFingerprint):
		return rec, usageError(fmt.Errorf("--cert-fingerprint: %w", err))
	case errors.Is(err, sitepublish.ErrDomain):
		return rec, usageError(fmt.Errorf("--search-domain: %w", err))
	}
	return rec, err
}

// openWindow returns the window of --server, else of the state folder.
func (a *app) openWindow(ctx context.Context) (api.WindowStatus, error) {
	n, err := a.node()
	if err != nil {
		return api.WindowStatus{}, err
	}
	n, _, err = a.via(n, false, "read")
	if err != nil {
		return api.WindowStatus{}, err
	}
	return n.Window(ctx)
}

// siteDomain is site.json's domain, else registry.DefaultDomain.
func (a *app) siteDomain() string {
	site, err := registry.LoadSiteIfExists(filepath.Join(a.stateDir, registry.SiteFileName))
	if err != nil || site.Domain == "" {
		return registry.DefaultDomain
	}
	return site.Domain
}

// checkSiteRecords warns, on standard error, where the site's DNS TXT
// records differ from the open window w: always with searchDomain given
// (status --search-domain), else only when a generic release is staged
// in the state folder, and then a missing record is a warning too.
func (a *app) checkSiteRecords(ctx context.Context, w api.WindowStatus, searchDomain string) {
	required := false
	if a.server == "" {
		rels, _ := bootassets.ListReleases(ctx, a.stateDir)
		for _, r := range rels {
			required = required || r.Generic()
		}
	}
	if !w.Open || w.URL == "" || (!required && searchDomain == "") {
		return
	}
	if searchDomain == "" {
		searchDomain = a.siteDomain()
	}
	want, err := sitepublish.New(w.URL, w.CertFingerprint, searchDomain)
	if err != nil {
		fmt.Fprintf(a.errw, "node-provisioner: warning: the window's answer URL cannot be published for a generic ISO: %v\n", err)
		return
	}
	res := a.resolver
	if res == nil {
		res = net.DefaultResolver
	}
	for _, f := range sitepublish.CheckDNS(ctx, res, want, sitepublish.CheckOptions{Required: required}) {
		fmt.Fprintf(a.errw, "node-provisioner: warning: %s\n", f)
	}
}

// printIPv6Boot prints the IPv6 boot lines of window in format (all: the
// three DHCP servers').
func (a *app) printIPv6Boot(window, format string) error {
	formats := []sitepublish.Format{sitepublish.FormatDnsmasq, sitepublish.FormatKea, sitepublish.FormatOPNsense}
	if format != "all" {
		f, err := sitepublish.ParseFormat(format)
		if err != nil {
			return usageError(fmt.Errorf("--format: %w", err))
		}
		formats = []sitepublish.Format{f}
	}
	var parts []string
	for _, f := range formats {
		text, err := sitepublish.IPv6Boot(f, window)
		if errors.Is(err, sitepublish.ErrWindowURL) {
			return usageError(fmt.Errorf("--ipv6-boot: %w", err))
		}
		if err != nil {
			return usageError(fmt.Errorf("--format: %w", err))
		}
		parts = append(parts, text)
	}
	fmt.Fprint(a.out, strings.Join(parts, "\n"))
	return nil
}
