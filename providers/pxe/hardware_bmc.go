package pxe

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/plasmactl/plasma-node/pxe/bmc"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// HardwareBMC is a hardware list machine's BMC: what node-provisioner's
// register takes with --bmc, the password by reference, the name of an
// environment variable that holds it, never the password itself:
//
//	bmc:
//	  url: ipmi://10.0.0.51           # or redfish://HOST[:PORT][/SYSTEM-ID]
//	  user: admin
//	  password_env: RACK1_BMC_PASSWORD
//	  cipher_suite: 3                 # IPMI, optional (0 is refused)
//	  privilege: operator             # IPMI, optional
//	  fingerprint: AB:CD:…            # Redfish, optional: pins the certificate
//	  session: true                   # Redfish, optional
//	  boot_mode: uefi                 # or legacy
//	  media_tls: true                 # Redfish, optional: virtual media over the window's HTTPS
type HardwareBMC struct {
	URL         string `yaml:"url"`
	User        string `yaml:"user"`
	PasswordEnv string `yaml:"password_env"`
	CipherSuite *int   `yaml:"cipher_suite"`
	Privilege   string `yaml:"privilege"`
	Fingerprint string `yaml:"fingerprint"`
	Session     bool   `yaml:"session"`
	BootMode    string `yaml:"boot_mode"`
	// MediaTLS gives the BMC its virtual medium's URL over the window's
	// HTTPS ([registry.BMC.MediaTLS]): the BMC trusts the window's
	// certificate. Only for a Redfish BMC.
	MediaTLS bool `yaml:"media_tls"`
}

var (
	bmcKeys   = []string{"url", "user", "password_env", "cipher_suite", "privilege", "fingerprint", "session", "boot_mode", "media_tls"}
	envNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// parseBMC reads and checks a machine's bmc mapping.
func parseBMC(file string, n *yaml.Node) (*HardwareBMC, error) {
	bad := func(line int, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %w: bmc: %s", file, line, ErrInvalidHardware, fmt.Sprintf(format, args...))
	}
	if n.Kind != yaml.MappingNode {
		return nil, bad(n.Line, "want a mapping of %s", strings.Join(bmcKeys, ", "))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Value == "password" {
			return nil, bad(k.Line, "a password is never written in a hardware list; name the environment variable that holds it with password_env")
		}
		if !slices.Contains(bmcKeys, k.Value) {
			return nil, bad(k.Line, "unknown key %q (known: %s)", k.Value, strings.Join(bmcKeys, ", "))
		}
	}
	var b HardwareBMC
	if err := n.Decode(&b); err != nil {
		return nil, bad(n.Line, "%v", err)
	}
	if _, err := b.registry(); err != nil {
		return nil, bad(n.Line, "%v", err)
	}
	if !envNameRe.MatchString(b.PasswordEnv) {
		return nil, bad(n.Line, "password_env %q: want the name of an environment variable that holds the password (letters, digits, _)", b.PasswordEnv)
	}
	return &b, nil
}

// registry returns the registration's BMC, checked.
func (b HardwareBMC) registry() (*registry.BMC, error) {
	r := &registry.BMC{URL: b.URL, User: b.User, Privilege: b.Privilege, Fingerprint: b.Fingerprint, Session: b.Session, BootMode: b.BootMode, MediaTLS: b.MediaTLS}
	if b.CipherSuite != nil {
		n, err := bmc.ParseCipherSuite(fmt.Sprint(*b.CipherSuite))
		if err != nil {
			return nil, fmt.Errorf("cipher_suite: %w", err)
		}
		r.CipherSuite = n
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// Registration returns the BMC as a registration carries it and its
// password, read from the environment variable password_env through
// getenv (os.Getenv). The error names the variable, never its value.
func (b HardwareBMC) Registration(getenv func(string) string) (*registry.BMC, string, error) {
	r, err := b.registry()
	if err != nil {
		return nil, "", err
	}
	pw := getenv(b.PasswordEnv)
	if pw == "" || strings.ContainsAny(pw, "\r\n") {
		return nil, "", fmt.Errorf("%w: the BMC password of %s: environment variable %s is unset, empty or spans lines", ErrInvalidHardware, b.URL, b.PasswordEnv)
	}
	return r, pw, nil
}
