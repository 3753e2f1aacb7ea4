package registry

import (
	"errors"
	"strings"

	"github.com/plasmactl/plasma-node/pxe/bmc"
	"github.com/plasmactl/plasma-node/pxe/secret"
)

// ErrInvalidBMC: a BMC endpoint, user, cipher suite, privilege,
// fingerprint or boot mode that is not valid, or a BMC password that is
// missing, empty or spans lines.
var ErrInvalidBMC = errors.New("invalid BMC")

// BMC is a registration's baseboard management controller, through which
// node-provisioner powers the machine and sets a one-time PXE boot. Its
// password is not here: it is the node's own, kept in the secrets folder
// (secret.Store.WriteBMCPassword), or the site secret Secret names
// (secret.Site), read each time the BMC is used; never in the
// registration file.
type BMC struct {
	// URL is ipmi://HOST[:PORT] or redfish://HOST[:PORT][/SYSTEM-ID].
	URL string `json:"url"`
	// User logs in to the BMC.
	User string `json:"user"`
	// Secret names the site secret holding the password (an enrolment
	// rule's bmc.secret), read when the BMC is used; empty: the node's
	// own BMC password.
	Secret string `json:"secret,omitempty"`
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
	// MediaTLS says the BMC fetches virtual media over the window's
	// HTTPS: the operator installed the window's certificate on it, or
	// it does not verify. Off, the medium's URL is plain HTTP with its
	// token. See [Site.MediaTLSOf].
	MediaTLS bool `json:"media_tls,omitempty"`
}

// Validate checks the endpoint and the settings that apply to its
// protocol (media_tls only where it has virtual media). Errors wrap [ErrInvalidBMC] and [ErrInvalidRegistration].
func (b BMC) Validate() error {
	e, err := bmc.Parse(b.URL)
	if err != nil {
		return invalid(ErrInvalidBMC, "%v", err)
	}
	if b.User == "" || strings.ContainsAny(b.User, "\r\n\t") || len(b.User) > 64 {
		return invalid(ErrInvalidBMC, "BMC %s: the user is empty, over 64 characters or has control characters", b.URL)
	}
	if b.Secret != "" {
		if err := secret.ValidateSiteName(b.Secret); err != nil {
			return invalid(ErrInvalidBMC, "BMC %s: password from %v", b.URL, err)
		}
	}
	if _, err := bmc.ParseBootMode(b.BootMode); err != nil {
		return invalid(ErrInvalidBMC, "BMC %s: %v", b.URL, err)
	}
	if err := bmc.CheckSettings(e, b.Options(bmc.Options{})); err != nil {
		return invalid(ErrInvalidBMC, "BMC %s: %v", b.URL, err)
	}
	if b.MediaTLS && !bmc.HasVirtualMedia(e) {
		return invalid(ErrInvalidBMC, "BMC %s: media_tls is for virtual media, which %s has not: give a redfish:// BMC, or turn media_tls off", b.URL, e.Protocol)
	}
	return nil
}

// Options returns the driver options the BMC's settings give, on top of
// base (timeouts, retries, logger).
func (b BMC) Options(base bmc.Options) bmc.Options {
	base.CipherSuite, base.Privilege, base.Fingerprint, base.Session = b.CipherSuite, b.Privilege, b.Fingerprint, b.Session
	return base
}
