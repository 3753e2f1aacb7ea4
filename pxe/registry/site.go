package registry

import (
	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/internal/hostname"
	"github.com/plasmactl/plasma-node/internal/regularfile"

	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// SiteFileName is the optional site settings file in the state folder.
const SiteFileName = "site.json"

// Defaults of [Site] fields left empty, as TAPPaaS's node-provisioner has
// them.
const (
	DefaultKeyboard = "en-us"
	DefaultCountry  = "us"
	DefaultTimezone = "UTC"
	DefaultDomain   = "mgmt.internal"
)

// Site holds the settings every node's answer shares.
type Site struct {
	// Keyboard is the installer's keyboard layout. Default: en-us.
	Keyboard string `json:"keyboard,omitempty"`
	// Country is a two-letter country code, written in lower case.
	// Default: us.
	Country string `json:"country,omitempty"`
	// Timezone is a zone name such as Europe/Vienna. Default: UTC.
	Timezone string `json:"timezone,omitempty"`
	// Mailto is the administrator's address. Default: root@<Domain>.
	Mailto string `json:"mailto,omitempty"`
	// Domain makes a node's FQDN <name>.<Domain>. Default: mgmt.internal.
	Domain string `json:"domain,omitempty"`
	// SSHKeys are public keys put in every node's root authorized_keys.
	SSHKeys []string `json:"ssh_keys,omitempty"`
	// PinNICNames pins the NIC names of every node whose registration
	// names none: its MACs, in order, become nic0, nic1… (see
	// [PinNICNames]) in its answer's network.interface-name-pinning, for
	// installers from 9.1. A registration's own NIC names win.
	PinNICNames bool `json:"pin_nic_names,omitempty"`
	// BootMethod is how the machines of registrations that name none
	// reach the installer ([Registration.BootMethod]). Default:
	// [BootNetwork].
	BootMethod BootMethod `json:"boot_method,omitempty"`
	// MediaAnswer is how installers booted from virtual media get their
	// answers when their registrations name none. Default:
	// [MediaAnswerISO].
	MediaAnswer MediaAnswer `json:"media_answer,omitempty"`
	// MediaTLS says every BMC fetches virtual media over the window's
	// HTTPS ([BMC.MediaTLS] for all of them).
	MediaTLS bool `json:"media_tls,omitempty"`
	// Filesystem is the boot disk's filesystem and its options. None:
	// ext4.
	Filesystem *Filesystem `json:"filesystem,omitempty"`
}

// siteFile is site.json: our keys at the top level, and TAPPaaS's
// site.json keys (location.*, email) accepted too.
type siteFile struct {
	Site
	Location struct {
		Country  string `json:"country"`
		Keyboard string `json:"keyboard"`
		Timezone string `json:"timezone"`
	} `json:"location"`
	Email string `json:"email"`
}

// maxSiteFile bounds a site settings file: 1 MiB.
const maxSiteFile = 1 << 20

// loadSite reads a site settings file. A missing file gives the zero Site
// and an error wrapping [fs.ErrNotExist]; a malformed one is an error
// naming the file. TAPPaaS's site.json keys (location.country,
// location.keyboard, location.timezone, email) are read too.
func loadSite(path string) (Site, error) {
	data, err := regularfile.Read(path, maxSiteFile)
	if err != nil {
		return Site{}, fmt.Errorf("site settings: %w", err)
	}
	var f siteFile
	if err := json.Unmarshal(data, &f); err != nil {
		return Site{}, fmt.Errorf("site settings %s: %w", path, err)
	}
	s := f.Site
	s.Keyboard = first(s.Keyboard, f.Location.Keyboard)
	s.Country = first(s.Country, f.Location.Country)
	s.Timezone = first(s.Timezone, f.Location.Timezone)
	s.Mailto = first(s.Mailto, f.Email)
	return s, nil
}

// LoadSiteIfExists is loadSite with a missing file read as no settings.
func LoadSiteIfExists(path string) (Site, error) {
	s, err := loadSite(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Site{}, nil
	}
	return s, err
}

// Merge returns s with the empty fields taken from other; SSH keys are
// joined.
func (s Site) Merge(other Site) Site {
	s.Keyboard = first(s.Keyboard, other.Keyboard)
	s.Country = first(s.Country, other.Country)
	s.Timezone = first(s.Timezone, other.Timezone)
	s.Mailto = first(s.Mailto, other.Mailto)
	s.Domain = first(s.Domain, other.Domain)
	s.SSHKeys = appendUnique(s.SSHKeys, other.SSHKeys...)
	s.PinNICNames = s.PinNICNames || other.PinNICNames
	s.MediaTLS = s.MediaTLS || other.MediaTLS
	s.BootMethod = BootMethod(first(string(s.BootMethod), string(other.BootMethod)))
	s.MediaAnswer = MediaAnswer(first(string(s.MediaAnswer), string(other.MediaAnswer)))
	if s.Filesystem == nil {
		s.Filesystem = other.Filesystem
	}
	return s
}

// withDefaults fills the empty fields with the package defaults.
func (s Site) withDefaults() Site {
	s = s.Merge(Site{Keyboard: DefaultKeyboard, Country: DefaultCountry, Timezone: DefaultTimezone, Domain: DefaultDomain})
	s.Country = strings.ToLower(s.Country)
	if s.Mailto == "" {
		s.Mailto = "root@" + s.Domain
	}
	return s
}

func first(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func appendUnique(dst []string, vs ...string) []string {
	for _, v := range vs {
		dup := false
		for _, d := range dst {
			if d == v {
				dup = true
				break
			}
		}
		if !dup {
			dst = append(dst, v)
		}
	}
	return dst
}

// Check refuses settings every answer would fail on: a domain that is
// not a DNS domain by the one rule plasma-node's platform domains follow
// too ([ValidateDomain]), and anything else the newest installer would
// refuse in a probe answer built with them.
func (s Site) Check() error {
	if err := ValidateDomain(s.Domain); err != nil {
		return err
	}
	if _, err := ParseBootMethod(string(s.BootMethod)); err != nil {
		return err
	}
	if _, err := ParseMediaAnswer(string(s.MediaAnswer)); err != nil {
		return err
	}
	return s.CheckRegistration(Registration{Name: "probe", BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}})
}

// ErrInvalidDomain: a site domain that is not a DNS domain by
// [hostname.DomainRule].
var ErrInvalidDomain = errors.New("invalid domain")

// ValidateDomain reports whether d can be the site's domain, which node
// names join into FQDNs: RFC 1123 labels of lower-case ASCII letters,
// digits and '-', each 1 to 63 characters, 253 characters in all, the
// rule of plasma-node's platform domains. The error wraps
// [ErrInvalidDomain] (and [ErrInvalidRegistration]), names the label at
// fault and says what would be valid. An empty domain is valid: the
// default applies.
func ValidateDomain(d string) error {
	if d == "" {
		return nil
	}
	if err := hostname.CheckDomain(d); err != nil {
		return invalid(ErrInvalidDomain, "domain %q: %v; want %s", d, err, hostname.DomainRule)
	}
	return nil
}

// CheckRegistration refuses a registration whose answer, built with s,
// the newest installer would refuse (a name too long for the domain, a
// data pool the installer cannot take). A boot disk of "ask" is checked
// as the first disk it could be.
func (s Site) CheckRegistration(r Registration) error {
	if r.BootDisk.Kind == answer.BootDiskAsk {
		r.BootDisk = answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}
	}
	a, err := Build(r, BuildOptions{Site: s, RootPassword: "probe-password"})
	if err == nil {
		err = answer.Validate(a, answer.LatestVersion)
	}
	return err
}
