package sitepublish

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/pxe/tlscert"
)

// TXTResolver looks up the TXT records of a DNS name; *net.Resolver is
// one. A name with no records is an error for which
// [errors.As] finds a *net.DNSError with IsNotFound, as net.Resolver
// returns it, or an empty list.
type TXTResolver interface {
	LookupTXT(ctx context.Context, name string) ([]string, error)
}

var _ TXTResolver = (*net.Resolver)(nil)

// DefaultLookupTimeout bounds each lookup of [CheckDNS] when
// [CheckOptions.Timeout] is zero.
const DefaultLookupTimeout = 2 * time.Second

// CheckOptions configures [CheckDNS]; the zero value of each field is its
// default.
type CheckOptions struct {
	// Required reports a record that is missing, or that cannot be looked
	// up, as a [Finding] too (a generic ISO is staged). Default: only
	// records that exist and differ from the window are findings.
	Required bool
	// Timeout bounds each lookup. Default: [DefaultLookupTimeout].
	Timeout time.Duration
}

// FindingKind says how a published record differs from the window.
type FindingKind string

// The kinds of [Finding].
const (
	// FindingMissing: no TXT record for the answer URL; a generic ISO
	// would not find the window through DNS.
	FindingMissing FindingKind = "missing"
	// FindingElsewhere: the record names another answer URL.
	FindingElsewhere FindingKind = "elsewhere"
	// FindingFingerprint: the fingerprint record is missing or differs
	// from the window's certificate, which the installer would refuse.
	FindingFingerprint FindingKind = "fingerprint"
	// FindingLookup: the lookup failed or ran out of time.
	FindingLookup FindingKind = "lookup"
)

// Finding is one way the site's published TXT records differ from the
// window's.
type Finding struct {
	// Kind says how.
	Kind FindingKind
	// Name is the DNS name looked up.
	Name string
	// Got is what the record holds, as the installer reads it (quotes
	// removed, strings of one record joined); empty when there is none.
	Got string
	// Want is the window's value.
	Want string
	// Err is the lookup's error for [FindingLookup].
	Err error
}

// String says the finding in one line naming the record and both values.
func (f Finding) String() string {
	switch f.Kind {
	case FindingMissing:
		return fmt.Sprintf("DNS TXT %s: no record; a generic ISO using DNS will not find the window (publish %q)", f.Name, f.Want)
	case FindingElsewhere:
		return fmt.Sprintf("DNS TXT %s: %q, not the window's answer URL %q", f.Name, f.Got, f.Want)
	case FindingFingerprint:
		if f.Got == "" {
			return fmt.Sprintf("DNS TXT %s: no record; the installer cannot pin the window's certificate %s", f.Name, f.Want)
		}
		return fmt.Sprintf("DNS TXT %s: %q, not the window's certificate %s", f.Name, f.Got, f.Want)
	default:
		return fmt.Sprintf("DNS TXT %s: lookup failed: %v", f.Name, f.Err)
	}
}

// CheckDNS looks up want's TXT records with res and returns how they
// differ from want: the answer URL's record missing (with Required) or
// naming another URL, and, for a window with a certificate fingerprint
// whose URL record is right, the fingerprint's record missing or
// different. Values are compared as the installer reads them (quotes
// removed, trimmed) and fingerprints in any case and colon spelling.
// Each lookup is bounded by opts.Timeout; a failed one is a
// [FindingLookup] (with Required). None means the records match. It
// ends early, with what it found, when ctx ends.
func CheckDNS(ctx context.Context, res TXTResolver, want Records, opts CheckOptions) []Finding {
	var out []Finding
	got, err := lookup(ctx, res, want.URLName(), opts.Timeout)
	switch {
	case err != nil:
		if opts.Required {
			out = append(out, Finding{Kind: FindingLookup, Name: want.URLName(), Want: want.AnswerURL, Err: err})
		}
		return out
	case got == "":
		if opts.Required {
			out = append(out, Finding{Kind: FindingMissing, Name: want.URLName(), Want: want.AnswerURL})
		}
		return out
	case got != want.AnswerURL:
		return append(out, Finding{Kind: FindingElsewhere, Name: want.URLName(), Got: got, Want: want.AnswerURL})
	}
	if want.CertFingerprint == "" {
		return out
	}
	got, err = lookup(ctx, res, want.FingerprintName(), opts.Timeout)
	if err != nil {
		return append(out, Finding{Kind: FindingLookup, Name: want.FingerprintName(), Want: want.CertFingerprint, Err: err})
	}
	if fp, nerr := tlscert.NormalizeFingerprint(got); nerr != nil || fp != want.CertFingerprint {
		out = append(out, Finding{Kind: FindingFingerprint, Name: want.FingerprintName(), Got: got, Want: want.CertFingerprint})
	}
	return out
}

// lookup returns name's TXT records as proxmox-fetch-answer reads dig's
// answer: quotes removed, records one a line, trimmed; "" and no error
// when there is none.
func lookup(ctx context.Context, res TXTResolver, name string, timeout time.Duration) (string, error) {
	if timeout <= 0 {
		timeout = DefaultLookupTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The trailing dot: the name is absolute, as dig asks it, and the
	// resolver's own search list is not tried.
	txt, err := res.LookupTXT(ctx, name+".")
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("look up TXT %s: %w", name, err)
	}
	return strings.TrimSpace(strings.ReplaceAll(strings.Join(txt, "\n"), `"`, "")), nil
}
