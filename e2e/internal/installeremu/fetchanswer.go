package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// What the installer's dhclient and proxmox-fetch-answer (its http
// plugin, pve-installer's proxmox-fetch-answer/src/fetch_plugins/http.rs)
// use when the ISO's mode file names no answer URL. The emulator keeps its
// own spelling of them, apart from node-provisioner's pxe/sitepublish, so
// that a mistake there shows here.
const (
	leaseFile      = "/var/lib/dhcp/dhclient.leases"
	resolvConf     = "/etc/resolv.conf"
	urlOptionName  = "proxmox-auto-installer-manifest-url"
	fpOptionName   = "proxmox-auto-installer-cert-fingerprint"
	urlTXTLabel    = "proxmox-auto-installer"
	fpTXTLabel     = "proxmox-auto-installer-cert-fingerprint"
	urlOptionCode  = 250
	fpOptionCode   = 251
	dnsLookupLimit = 10 * time.Second
)

// leaseModifiers ask for options 250 and 251 as well, as the installer's
// dhclient.conf does ("also request"), and for the search list.
func leaseModifiers() []dhcpv4.Modifier {
	return []dhcpv4.Modifier{dhcpv4.WithRequestedOptions(dhcpv4.GenericOptionCode(urlOptionCode), dhcpv4.GenericOptionCode(fpOptionCode), dhcpv4.OptionDNSDomainSearchList)}
}

// keepLease writes what dhclient and its script leave behind after a
// lease: the lease file, with options 250 and 251 as text under the names
// the installer's dhclient.conf gives them, and resolv.conf.
func keepLease(nic string, ack *dhcpv4.DHCPv4) error {
	var b strings.Builder
	fmt.Fprintf(&b, "lease {\n  interface %q;\n  fixed-address %s;\n", nic, ack.YourIPAddr)
	if m := ack.SubnetMask(); m != nil {
		fmt.Fprintf(&b, "  option subnet-mask %s;\n", net.IP(m))
	}
	if ns := ack.DNS(); len(ns) > 0 {
		fmt.Fprintf(&b, "  option domain-name-servers %s;\n", joinIPs(ns))
	}
	for _, o := range []struct {
		code uint8
		name string
	}{{urlOptionCode, urlOptionName}, {fpOptionCode, fpOptionName}} {
		if v := ack.Options.Get(dhcpv4.GenericOptionCode(o.code)); v != nil {
			fmt.Fprintf(&b, "  option %s \"%s\";\n", o.name, dhclientText(v))
		}
	}
	if d := ack.DomainName(); d != "" {
		fmt.Fprintf(&b, "  option domain-name \"%s\";\n", dhclientText([]byte(d)))
	}
	b.WriteString("}\n")
	if err := os.MkdirAll(filepath.Dir(leaseFile), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(leaseFile, []byte(b.String()), 0o644); err != nil {
		return err
	}
	// Debian's dhclient-script: the search list of option 119, else the
	// domain name of option 15; a nameserver line per option 6 address.
	var r strings.Builder
	search := ""
	if l := ack.DomainSearch(); l != nil && len(l.Labels) > 0 {
		search = strings.Join(l.Labels, " ")
	} else if d := ack.DomainName(); d != "" {
		search = d
	}
	if search != "" {
		fmt.Fprintf(&r, "search %s\n", search)
	}
	for _, ns := range ack.DNS() {
		fmt.Fprintf(&r, "nameserver %s\n", ns)
	}
	if err := os.MkdirAll(filepath.Dir(resolvConf), 0o755); err != nil {
		return err
	}
	return os.WriteFile(resolvConf, []byte(r.String()), 0o644)
}

func joinIPs(ips []net.IP) string {
	s := make([]string, len(ips))
	for i, ip := range ips {
		s[i] = ip.String()
	}
	return strings.Join(s, ", ")
}

// dhclientText writes an option declared "text" as dhclient's lease file
// does: printable ASCII as it is, with a double or single quote, '$',
// '`' and a backslash escaped by a backslash, anything else as a
// three-digit octal escape.
func dhclientText(v []byte) string {
	var b strings.Builder
	for _, c := range v {
		switch {
		case strings.IndexByte("\"'$`\\", c) >= 0:
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c > 0x7e:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// findAnswerURL fills in the answer URL of a mode file that names none
// as proxmox-fetch-answer does: the lease's option 250 first, else the
// TXT record under resolv.conf's search domain. A fingerprint of the ISO
// wins; one of option 251 or of DNS is taken only with the URL from the
// same place. It says which place the URL came from.
func findAnswerURL(m *modeFile) error {
	source := "DHCP option 250"
	url, fp, err := fromLease(m.HTTP.CertFingerprint)
	if err != nil {
		step("%v; asking DNS", err)
		source = "DNS TXT"
		if url, fp, err = fromDNS(m.HTTP.CertFingerprint); err != nil {
			return fmt.Errorf("no answer URL in the ISO, the DHCP lease or DNS: %w", err)
		}
	}
	step("answer URL %s from %s, fingerprint %q", url, source, fp)
	m.HTTP.URL, m.HTTP.CertFingerprint = url, fp
	return nil
}

// fromLease reads the first option 250 and 251 lines of the lease file,
// each value the line's last blank-separated word without its first
// character and last two (the quotes and ';').
func fromLease(fp string) (string, string, error) {
	raw, err := os.ReadFile(leaseFile)
	if err != nil {
		return "", fp, err
	}
	value := func(line string) string {
		w := line[strings.LastIndexByte(line, ' ')+1:]
		if len(w) < 3 {
			return ""
		}
		return w[1 : len(w)-2]
	}
	url := ""
	for line := range strings.SplitSeq(string(raw), "\n") {
		t := strings.TrimSpace(line)
		if url == "" && strings.HasPrefix(t, "option "+urlOptionName) {
			url = value(line)
		}
		if fp == "" && strings.HasPrefix(t, "option "+fpOptionName) {
			fp = value(line)
		}
	}
	if url == "" {
		return "", fp, errors.New("no DHCP option found for the answer URL")
	}
	return url, fp, nil
}

// fromDNS looks up the TXT records under the first search line of
// resolv.conf, as "dig txt +short" answers: quotes removed, trimmed.
func fromDNS(fp string) (string, string, error) {
	raw, err := os.ReadFile(resolvConf)
	if err != nil {
		return "", fp, err
	}
	domain := ""
	for line := range strings.SplitSeq(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == "search" {
			domain = strings.TrimSpace(v)
			break
		}
	}
	if domain == "" {
		return "", fp, errors.New("no search domain in " + resolvConf)
	}
	url, err := txt(urlTXTLabel + "." + domain)
	if err != nil {
		return "", fp, err
	}
	if fp == "" {
		fp, _ = txt(fpTXTLabel + "." + domain)
	}
	return url, fp, nil
}

// txt asks the resolv.conf nameserver for name's TXT records.
func txt(name string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dnsLookupLimit)
	defer cancel()
	r := &net.Resolver{PreferGo: true}
	recs, err := r.LookupTXT(ctx, name+".")
	if err != nil {
		return "", fmt.Errorf("TXT %s: %w", name, err)
	}
	v := strings.TrimSpace(strings.ReplaceAll(strings.Join(recs, "\n"), `"`, ""))
	if v == "" {
		return "", fmt.Errorf("TXT %s: empty response", name)
	}
	step("TXT %s: %q", name, v)
	return v, nil
}
