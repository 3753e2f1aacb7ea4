package secret

import (
	"context"
	"fmt"
	"io/fs"
	"regexp"
	"strings"

	"github.com/plasmactl/plasma-node/internal/regularfile"
)

// ErrNoSiteSecret: no site secret of that name is kept. It matches
// fs.ErrNotExist too.
var ErrNoSiteSecret = fmt.Errorf("no such site secret: %w", fs.ErrNotExist)

// MaxSiteSecret bounds a site secret's value: 4 KiB (IPMI passwords are
// 20 bytes, Redfish services take a few hundred).
const MaxSiteSecret = 4 << 10

// siteNameRE is a site secret's name: what a rule's bmc.secret names.
var siteNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// ValidateSiteName checks that name can name a site secret: 1 to 63
// lower-case letters, digits, '.', '_' or '-', not starting with a
// punctuation mark. Otherwise the error wraps [ErrInvalidName].
func ValidateSiteName(name string) error {
	if !siteNameRE.MatchString(name) || strings.Contains(name, "..") {
		return fmt.Errorf("%w %q: a site secret's name is 1 to 63 of a-z, 0-9, '.', '_' or '-', starting with a letter or digit", ErrInvalidName, name)
	}
	return nil
}

// CheckSiteValue checks a site secret's value: 1 to [MaxSiteSecret]
// bytes on one line. The error names the secret, never quotes the value,
// and wraps [ErrInvalidPassword].
func CheckSiteValue(name, value string) error {
	switch {
	case value == "":
		return invalidf("site secret %s: the value is empty", name)
	case len(value) > MaxSiteSecret:
		return invalidf("site secret %s: the value is %d bytes; at most %d are kept", name, len(value), MaxSiteSecret)
	case strings.ContainsAny(value, "\r\n\x00"):
		return invalidf("site secret %s: the value spans lines or holds a NUL byte; want one line", name)
	}
	return nil
}

// SiteValue reads a site secret's value as `secret set` takes it (from
// standard input or a file): its first line without the line break,
// refusing more than one non-empty line. The error never quotes it.
func SiteValue(name string, data []byte) (string, error) {
	s := strings.TrimSuffix(string(data), "\n")
	s = strings.TrimSuffix(s, "\r")
	if err := CheckSiteValue(name, s); err != nil {
		return "", err
	}
	return s, nil
}

// Site is the store of the site's named secrets, such as the BMC
// password an enrolment rule's bmc names. A value is write-only from the
// outside: [Site.SiteSecretNames] lists names, never values, and only
// the process that uses a secret reads it. Implementations never log a
// value nor put it in an error; package pxe/store/folder's SiteSecrets
// (files 0600 in a 0700 folder of the state folder) and package
// pxe/store/postgres's Secrets (sealed with the host's key) are two.
type Site interface {
	// SetSiteSecret keeps value as the secret name, replacing an older
	// one, atomically. A bad name wraps [ErrInvalidName], a bad value
	// [ErrInvalidPassword] ([CheckSiteValue]).
	SetSiteSecret(ctx context.Context, name, value string) error
	// ReadSiteSecret returns the secret name; none kept is an error
	// wrapping [ErrNoSiteSecret] (and so fs.ErrNotExist).
	ReadSiteSecret(ctx context.Context, name string) (string, error)
	// SiteSecretNames returns the names of the secrets kept, sorted.
	SiteSecretNames(ctx context.Context) ([]string, error)
	// RemoveSiteSecret removes the secret name; none kept is an error
	// wrapping [ErrNoSiteSecret].
	RemoveSiteSecret(ctx context.Context, name string) error
}

// ReadSiteValueFile reads the secret name's value from the regular file
// path, as [SiteValue] takes it. The error names the file but never
// quotes it.
func ReadSiteValueFile(name, path string) (string, error) {
	data, err := regularfile.Read(path, MaxSiteSecret+2)
	if err != nil {
		return "", fmt.Errorf("site secret %s: %w", name, err)
	}
	return SiteValue(name, data)
}
