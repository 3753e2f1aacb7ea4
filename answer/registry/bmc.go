package registry

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/internal/regularfile"
	"github.com/plasmactl/plasma-node/pxe/bmc"
)

// ErrInvalidBMC: a BMC endpoint, user, cipher suite, privilege,
// fingerprint or boot mode that is not valid, or a BMC password that is
// missing, empty or spans lines.
var ErrInvalidBMC = errors.New("invalid BMC")

// BMC is a registration's baseboard management controller, through which
// node-provisioner powers the machine and sets a one-time PXE boot. Its
// password is not here: it is kept in the secrets folder
// ([SecretStore.WriteBMCPassword]), never in the registration file.
type BMC struct {
	// URL is ipmi://HOST[:PORT] or redfish://HOST[:PORT][/SYSTEM-ID].
	URL string `json:"url"`
	// User logs in to the BMC.
	User string `json:"user"`
	// CipherSuite is the IPMI cipher suite; 0 is the default, 3.
	CipherSuite int `json:"cipher_suite,omitempty"`
	// Privilege is the IPMI session privilege; "" is operator.
	Privilege string `json:"privilege,omitempty"`
	// Fingerprint pins a Redfish BMC's TLS certificate (SHA-256).
	Fingerprint string `json:"fingerprint,omitempty"`
	// Session makes Redfish log in with a session rather than Basic.
	Session bool `json:"session,omitempty"`
	// BootMode is the one-time boot's firmware mode: "uefi" (also "")
	// or "legacy".
	BootMode string `json:"boot_mode,omitempty"`
}

// Validate checks the endpoint and the settings that apply to its
// protocol. Errors wrap [ErrInvalidBMC] and [ErrInvalidRegistration].
func (b BMC) Validate() error {
	e, err := bmc.Parse(b.URL)
	if err != nil {
		return invalid(ErrInvalidBMC, "%v", err)
	}
	if b.User == "" || strings.ContainsAny(b.User, "\r\n\t") || len(b.User) > 64 {
		return invalid(ErrInvalidBMC, "BMC %s: the user is empty, over 64 characters or has control characters", b.URL)
	}
	if _, err := bmc.ParseBootMode(b.BootMode); err != nil {
		return invalid(ErrInvalidBMC, "BMC %s: %v", b.URL, err)
	}
	if err := bmc.CheckSettings(e, b.Options(bmc.Options{})); err != nil {
		return invalid(ErrInvalidBMC, "BMC %s: %v", b.URL, err)
	}
	return nil
}

// Options returns the driver options the BMC's settings give, on top of
// base (timeouts, retries, logger).
func (b BMC) Options(base bmc.Options) bmc.Options {
	base.CipherSuite, base.Privilege, base.Fingerprint, base.Session = b.CipherSuite, b.Privilege, b.Fingerprint, b.Session
	return base
}

// maxBMCPassword bounds a BMC password file; IPMI allows 20 bytes,
// Redfish services a few hundred.
const maxBMCPassword = 4 << 10

// ReadBMCPasswordFile reads a BMC password from a regular file: its
// first line, without the newline. The error names the file but never
// quotes it, and wraps [ErrInvalidBMC] for an empty password.
func ReadBMCPasswordFile(path string) (string, error) {
	data, err := regularfile.Read(path, maxBMCPassword)
	if err != nil {
		return "", fmt.Errorf("read BMC password %s: %w", path, err)
	}
	pw, _, _ := strings.Cut(string(data), "\n")
	pw = strings.TrimSuffix(pw, "\r")
	if pw == "" {
		return "", invalid(ErrInvalidBMC, "read BMC password %s: the first line is empty", path)
	}
	return pw, nil
}

// BMCPasswordPath returns where the BMC password of node name is kept.
func (s *SecretStore) BMCPasswordPath(name string) string {
	return s.PasswordPath(name + ".bmc")
}

// WriteBMCPassword writes node name's BMC password to
// <dir>/<name>.bmc.pw with mode 0600, atomically, and returns the path.
// No error includes pw.
func (s *SecretStore) WriteBMCPassword(name, pw string) (string, error) {
	if err := ValidateName(name); err != nil {
		return "", err
	}
	if pw == "" || strings.ContainsAny(pw, "\r\n") {
		return "", invalid(ErrInvalidBMC, "write BMC password of %s: the password is empty or spans lines", name)
	}
	path := s.BMCPasswordPath(name)
	if err := atomicfile.WriteFile(path, []byte(pw+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write BMC password of %s: %w", name, err)
	}
	return path, nil
}

// ReadBMCPassword returns node name's BMC password. A file that group
// or others may read is refused, as is a missing one.
func (s *SecretStore) ReadBMCPassword(name string) (string, error) {
	if err := ValidateName(name); err != nil {
		return "", err
	}
	path := s.BMCPasswordPath(name)
	f, err := regularfile.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("BMC password of %s: %w: no %s (register the node again with its BMC password)", name, ErrInvalidBMC, path)
		}
		return "", fmt.Errorf("BMC password of %s: %w", name, err)
	}
	fi, err := f.Stat()
	f.Close()
	if err != nil {
		return "", fmt.Errorf("BMC password of %s: %w", name, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("BMC password of %s: %w: %s has mode %v; want 0600", name, ErrInvalidBMC, path, fi.Mode().Perm())
	}
	return ReadBMCPasswordFile(path)
}

// RemoveBMCPassword removes node name's BMC password file; a missing one
// is no error.
func (s *SecretStore) RemoveBMCPassword(name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	if err := os.Remove(s.BMCPasswordPath(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove BMC password of %s: %w", name, err)
	}
	return nil
}
