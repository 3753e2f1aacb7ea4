package sitepublish

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/plasmactl/plasma-node/internal/hostname"
	"github.com/plasmactl/plasma-node/internal/hostport"
	"github.com/plasmactl/plasma-node/pxe/tlscert"
)

// What the installer's proxmox-fetch-answer reads when its ISO names no
// answer URL (reference §2.2): first the DHCP options of dhclient's lease,
// then the DNS TXT records under the first search domain of resolv.conf.
const (
	// OptionAnswerURL is the DHCP option holding the answer URL, as text
	// (dhclient's "proxmox-auto-installer-manifest-url").
	OptionAnswerURL = 250
	// OptionCertFingerprint is the DHCP option holding the SHA-256
	// fingerprint of the answer server's certificate, as text
	// ("proxmox-auto-installer-cert-fingerprint"). The installer takes it
	// only with the URL of option 250.
	OptionCertFingerprint = 251
	// OptionAnswerURLName and OptionCertFingerprintName are the names the
	// installer's dhclient.conf gives options 250 and 251.
	OptionAnswerURLName       = "proxmox-auto-installer-manifest-url"
	OptionCertFingerprintName = "proxmox-auto-installer-cert-fingerprint"
	// TXTAnswerURL and TXTCertFingerprint are the labels under the search
	// domain whose TXT records hold the answer URL and the fingerprint.
	TXTAnswerURL       = "proxmox-auto-installer"
	TXTCertFingerprint = "proxmox-auto-installer-cert-fingerprint"
	// maxValue is the longest value published: a DHCP option and one
	// string of a TXT record hold 255 bytes.
	maxValue = 255
)

// Errors of [New]; each names the value and says what would be valid.
var (
	// ErrAnswerURL: the answer URL cannot be published.
	ErrAnswerURL = errors.New("answer URL cannot be published")
	// ErrFingerprint: the certificate fingerprint is not a SHA-256
	// fingerprint, or comes with a plain http:// answer URL.
	ErrFingerprint = errors.New("certificate fingerprint cannot be published")
	// ErrDomain: the search domain is not a DNS domain.
	ErrDomain = errors.New("search domain cannot be published")
)

// Records is what the site publishes for one window. Make it with [New].
type Records struct {
	// AnswerURL is the window's answer URL.
	AnswerURL string
	// CertFingerprint is the answer server's certificate fingerprint in
	// the installer's "AA:BB:…" form; empty for an http:// URL, or a
	// certificate the installer trusts without a pin.
	CertFingerprint string
	// Domain is the search domain the site's DHCP server hands out; the
	// TXT records live under it.
	Domain string
}

// New checks what is to be published and returns it as [Records]: an
// absolute http:// or https:// answer URL of at most 255 printable ASCII
// characters that no DHCP or DNS configuration needs to escape (no
// blank, quote, backslash or comma), a SHA-256 fingerprint (any case,
// colons optional) or none, only with https://, and a DNS domain. The
// URL's host is no link-local IPv6 address ([hostport.CheckAdvertised]).
// Errors wrap [ErrAnswerURL], [ErrFingerprint] or [ErrDomain].
func New(answerURL, fingerprint, domain string) (Records, error) {
	var r Records
	u, err := url.Parse(answerURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return r, fmt.Errorf("%w: %q: want an absolute http:// or https:// URL such as https://192.0.2.10:8090/answer", ErrAnswerURL, answerURL)
	}
	if err := hostport.CheckAdvertised(u.Hostname()); err != nil {
		return r, fmt.Errorf("%w: %q: %w", ErrAnswerURL, answerURL, err)
	}
	if i := strings.IndexFunc(answerURL, func(c rune) bool {
		return c <= ' ' || c >= 0x7f || c == '"' || c == '\\' || c == ',' || c == '\''
	}); i >= 0 {
		return r, fmt.Errorf("%w: %q: character %q at %d must be percent-encoded", ErrAnswerURL, answerURL, answerURL[i], i)
	}
	if len(answerURL) > maxValue {
		return r, fmt.Errorf("%w: %d characters, over the %d a DHCP option or a TXT string holds", ErrAnswerURL, len(answerURL), maxValue)
	}
	r.AnswerURL = answerURL
	if fingerprint != "" {
		if u.Scheme != "https" {
			return r, fmt.Errorf("%w: the installer pins a certificate only for an https:// answer URL, not %s", ErrFingerprint, answerURL)
		}
		fp, err := tlscert.NormalizeFingerprint(fingerprint)
		if err != nil {
			return r, fmt.Errorf("%w: %w", ErrFingerprint, err)
		}
		r.CertFingerprint = fp
	}
	if err := hostname.CheckDomain(domain); err != nil {
		return r, fmt.Errorf("%w: %q: %v; want %s", ErrDomain, domain, err, hostname.DomainRule)
	}
	r.Domain = domain
	return r, nil
}

// URLName is the DNS name of the answer URL's TXT record.
func (r Records) URLName() string { return TXTAnswerURL + "." + r.Domain }

// FingerprintName is the DNS name of the fingerprint's TXT record.
func (r Records) FingerprintName() string { return TXTCertFingerprint + "." + r.Domain }
