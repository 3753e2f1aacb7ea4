package sitepublish

import (
	"errors"
	"fmt"
	"strings"
)

// Format names the configuration [Records.Text] writes.
type Format string

// The formats, in the order [Records.All] writes them.
const (
	// FormatDnsmasq is dnsmasq's dhcp-option lines for options 250 and
	// 251, their values quoted so that dnsmasq sends them as text (a bare
	// "AA:BB:…" would go out as hex bytes).
	FormatDnsmasq Format = "dnsmasq"
	// FormatKea is the option-def and option-data of ISC Kea's Dhcp4
	// configuration, options 250 and 251 defined as strings.
	FormatKea Format = "kea"
	// FormatOPNsense is what to enter on OPNsense's ISC DHCPv4 page of
	// the installers' interface, under Additional Options.
	FormatOPNsense Format = "opnsense"
	// FormatZone is the TXT records as zone-file lines.
	FormatZone Format = "zone"
	// FormatDnsmasqTXT is the TXT records as dnsmasq's txt-record lines,
	// for a dnsmasq that is the segment's resolver.
	FormatDnsmasqTXT Format = "dnsmasq-txt"
)

// Formats lists every [Format], in the order [Records.All] writes them.
var Formats = []Format{FormatDnsmasq, FormatKea, FormatOPNsense, FormatZone, FormatDnsmasqTXT}

// ErrFormat: a format [Records.Text] does not write.
var ErrFormat = errors.New("unknown site configuration format")

// ParseFormat returns the [Format] named s; an error wrapping [ErrFormat]
// lists the valid names.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return "", fmt.Errorf("%w %q: want one of %s", ErrFormat, s, strings.Join(names, ", "))
}

// ttl is the TTL of the zone-file lines: short, as the URL follows the
// window.
const ttl = 300

// Text returns r as the configuration f. Lines starting with '#' (';' in
// a zone file) are comments the configuration takes as they are. An
// unknown f is an error wrapping [ErrFormat].
func (r Records) Text(f Format) (string, error) {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	switch f {
	case FormatDnsmasq:
		line("# dnsmasq: options %d and %d as text, for the installer's dhclient (it asks for both)", OptionAnswerURL, OptionCertFingerprint)
		line("dhcp-option=%d,%q", OptionAnswerURL, r.AnswerURL)
		if r.CertFingerprint != "" {
			line("dhcp-option=%d,%q", OptionCertFingerprint, r.CertFingerprint)
		}
	case FormatKea:
		line(`// ISC Kea, in "Dhcp4" (or a subnet's "option-data"): options %d and %d defined as strings`, OptionAnswerURL, OptionCertFingerprint)
		line(`"option-def": [`)
		line(`  { "name": %q, "code": %d, "space": "dhcp4", "type": "string" },`, OptionAnswerURLName, OptionAnswerURL)
		line(`  { "name": %q, "code": %d, "space": "dhcp4", "type": "string" }`, OptionCertFingerprintName, OptionCertFingerprint)
		line(`],`)
		line(`"option-data": [`)
		if r.CertFingerprint != "" {
			line(`  { "name": %q, "data": %q },`, OptionAnswerURLName, r.AnswerURL)
			line(`  { "name": %q, "data": %q }`, OptionCertFingerprintName, r.CertFingerprint)
		} else {
			line(`  { "name": %q, "data": %q }`, OptionAnswerURLName, r.AnswerURL)
		}
		line(`]`)
	case FormatOPNsense:
		line("# OPNsense: Services > ISC DHCPv4 > (the installers' interface) > Additional Options, one row each:")
		line("#   Number %d, Type Text, Value %s", OptionAnswerURL, r.AnswerURL)
		if r.CertFingerprint != "" {
			line("#   Number %d, Type Text, Value %s", OptionCertFingerprint, r.CertFingerprint)
		}
		line("# and the Domain name field set to %s for the DNS records.", r.Domain)
	case FormatZone:
		line("; TXT records of the search domain %s, which the site's DHCP server hands out", r.Domain)
		line("%s. %d IN TXT %q", r.URLName(), ttl, r.AnswerURL)
		if r.CertFingerprint != "" {
			line("%s. %d IN TXT %q", r.FingerprintName(), ttl, r.CertFingerprint)
		}
	case FormatDnsmasqTXT:
		line("# dnsmasq as the segment's resolver; its DHCP hands out the search domain with domain=%s", r.Domain)
		line("txt-record=%s,%q", r.URLName(), r.AnswerURL)
		if r.CertFingerprint != "" {
			line("txt-record=%s,%q", r.FingerprintName(), r.CertFingerprint)
		}
	default:
		_, err := ParseFormat(string(f))
		return "", err
	}
	return b.String(), nil
}

// All returns r in every format of [Formats], each after a blank line
// but the first.
func (r Records) All() string {
	var parts []string
	for _, f := range Formats {
		s, _ := r.Text(f)
		parts = append(parts, s)
	}
	return strings.Join(parts, "\n")
}
