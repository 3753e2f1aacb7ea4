package answer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/ssh"
)

// ErrBadInstallReport is wrapped by [ParseInstallReport]'s errors: a body
// that is not one JSON object, a known field of the wrong JSON type or an
// invalid value (a MAC, an address, a host key), or a report of another
// schema major version.
var ErrBadInstallReport = errors.New("bad install report")

// ErrInvalidHostKey is wrapped, with [ErrBadInstallReport], by the error
// of a report whose SSH host public key does not parse, or is of another
// algorithm than its slot names.
var ErrInvalidHostKey = errors.New("invalid SSH host key")

// maxReportDisks is the most disks an install report may list: 256.
const maxReportDisks = 256

// maxReportString bounds a reported word (a name, a version, a serial).
const maxReportString = 256

// InstallReport is what the post-installation webhook tells of the
// installed system (proxmox-post-hook's body, $schema 1.0 to 1.2), the
// fields the inventory keeps. Fields a newer minor schema adds are
// ignored.
type InstallReport struct {
	// Schema is the body's $schema.version ("1.2"), "" when not sent.
	Schema string `json:"schema,omitempty"`
	// FQDN is the installed system's name.
	FQDN string `json:"fqdn,omitempty"`
	// MachineID is /etc/machine-id of the installed system (32 hex digits).
	MachineID string `json:"machine_id,omitempty"`
	// ProductVersion is the installed pve-manager's version.
	ProductVersion string `json:"product_version,omitempty"`
	// Kernel is the installed kernel's release ("6.14.8-2-pve").
	Kernel string `json:"kernel,omitempty"`
	// BootMode is "efi" or "bios", "" when not sent.
	BootMode string `json:"boot_mode,omitempty"`
	// SecureBoot is whether the installer ran under Secure Boot (the body
	// leaves it out when it was off).
	SecureBoot bool `json:"secure_boot"`
	// Management is the management interface, nil when none was marked.
	Management *ReportInterface `json:"management,omitempty"`
	// MACs are the MACs of every interface, lowercase, in the body's order.
	MACs []string `json:"macs,omitempty"`
	// NICNames are the names of the interfaces whose names the answer
	// pinned (network.interface-name-pinning, 9.1 and later; the body's
	// "is-pinned"), by MAC, lowercase; nil when none was pinned.
	NICNames map[string]string `json:"nic_names,omitempty"`
	// HostKeys are the SSH host public keys as "TYPE BASE64", without the
	// comment, in the order ed25519, ecdsa, rsa.
	HostKeys []string `json:"host_keys,omitempty"`
	// BootDisks are the disks the system was installed on.
	BootDisks []ReportDisk `json:"boot_disks,omitempty"`
	// Token is the body's "token" (9.2+), the answer's
	// post-installation-webhook.auth-token sent back; "" when not sent.
	// It is a secret: it is never kept (no JSON), logged or shown.
	Token string `json:"-"`
}

// ReportInterface is a reported network interface.
type ReportInterface struct {
	// Name is its name on the installed system (the pinned one if pinned).
	Name string `json:"name"`
	// MAC is its MAC, lowercase.
	MAC string `json:"mac"`
	// Address is its address with prefix, as the installed system has it.
	Address netip.Prefix `json:"address,omitzero"`
}

// ReportDisk is a reported boot disk, from its udev properties.
type ReportDisk struct {
	// Name is its device (DEVNAME, "/dev/nvme0n1").
	Name string `json:"name,omitempty"`
	// Serial is ID_SERIAL_SHORT, else ID_SERIAL.
	Serial string `json:"serial,omitempty"`
	// Size is the size the body gives, in bytes.
	Size uint64 `json:"size,omitempty"`
}

// webhookBody is the wire form, kebab-case (proxmox-post-hook PostHookInfo).
type webhookBody struct {
	Schema *struct {
		Version string `json:"version"`
	} `json:"$schema"`
	Product struct {
		Version string `json:"version"`
	} `json:"product"`
	Kernel struct {
		Release string `json:"release"`
	} `json:"kernel-version"`
	BootInfo *struct {
		Mode       string `json:"mode"`
		SecureBoot bool   `json:"secureboot"`
	} `json:"boot-info"`
	FQDN      string `json:"fqdn"`
	MachineID string `json:"machine-id"`
	Token     string `json:"token"`
	Disks     []struct {
		Size       uint64            `json:"size"`
		IsBootDisk bool              `json:"is-bootdisk"`
		Udev       map[string]string `json:"udev-properties"`
	} `json:"disks"`
	Interfaces []struct {
		Name         string `json:"name"`
		MAC          string `json:"mac"`
		Address      string `json:"address"`
		IsManagement bool   `json:"is-management"`
		IsPinned     bool   `json:"is-pinned"`
	} `json:"network-interfaces"`
	HostKeys *struct {
		ECDSA   string `json:"ecdsa"`
		Ed25519 string `json:"ed25519"`
		RSA     string `json:"rsa"`
	} `json:"ssh-public-host-keys"`
}

var (
	schemaRE    = regexp.MustCompile(`^([0-9]{1,4})\.[0-9]{1,4}$`)
	machineIDRE = regexp.MustCompile(`^[0-9a-f]{32}$`)
)

// ParseInstallReport reads a post-installation webhook body. Errors wrap
// [ErrBadInstallReport] (and [ErrTooManyInterfaces] or
// [ErrInvalidHostKey]) and name the field; they quote no value. What the
// installer writes when it could not read a value ("unknown") counts as
// not sent.
func ParseInstallReport(body []byte) (*InstallReport, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("parse install report: %w: %s", ErrBadInstallReport, fmt.Sprintf(format, args...))
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, bad("want a JSON object")
	}
	var b webhookBody
	if err := json.Unmarshal(trimmed, &b); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, bad("field %s: a JSON %s, want %s", te.Field, te.Value, te.Type)
		}
		return nil, bad("not JSON: %v", err)
	}
	r := &InstallReport{}
	if b.Schema != nil {
		m := schemaRE.FindStringSubmatch(b.Schema.Version)
		if m == nil {
			return nil, bad("$schema.version: want MAJOR.MINOR")
		}
		if m[1] != "1" {
			return nil, bad("$schema.version %s: this server reads schema 1.x", b.Schema.Version)
		}
		r.Schema = b.Schema.Version
	}
	for _, f := range []struct {
		name string
		v    string
		dst  *string
	}{
		{"fqdn", b.FQDN, &r.FQDN},
		{"product.version", b.Product.Version, &r.ProductVersion},
		{"kernel-version.release", b.Kernel.Release, &r.Kernel},
		{"machine-id", b.MachineID, &r.MachineID},
	} {
		v, err := word(f.v)
		if err != nil {
			return nil, bad("%s: %v", f.name, err)
		}
		*f.dst = v
	}
	if len(b.Token) > maxReportString {
		return nil, bad("token: %d bytes, at most %d", len(b.Token), maxReportString)
	}
	r.Token = b.Token
	if r.MachineID != "" && !machineIDRE.MatchString(r.MachineID) {
		return nil, bad("machine-id: want 32 lowercase hex digits")
	}
	if bi := b.BootInfo; bi != nil {
		if bi.Mode != "efi" && bi.Mode != "bios" {
			return nil, bad("boot-info.mode: want efi or bios")
		}
		r.BootMode, r.SecureBoot = bi.Mode, bi.SecureBoot
	}
	if err := r.readInterfaces(&b); err != nil {
		return nil, fmt.Errorf("parse install report: %w: %w", ErrBadInstallReport, err)
	}
	if err := r.readDisks(&b); err != nil {
		return nil, fmt.Errorf("parse install report: %w: %w", ErrBadInstallReport, err)
	}
	if err := r.readHostKeys(&b); err != nil {
		return nil, fmt.Errorf("parse install report: %w: %w", ErrBadInstallReport, err)
	}
	return r, nil
}

// word checks a reported string: bounded, UTF-8, no control characters;
// "unknown" (the installer's word for what it could not read) is "".
func word(s string) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "unknown":
		return "", nil
	case len(s) > maxReportString:
		return "", fmt.Errorf("%d bytes, at most %d", len(s), maxReportString)
	case !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "", errors.New("not printable text")
	}
	return s, nil
}

func (r *InstallReport) readInterfaces(b *webhookBody) error {
	if n := len(b.Interfaces); n > MaxInterfaces {
		return fmt.Errorf("%w: %d network interfaces, at most %d", ErrTooManyInterfaces, n, MaxInterfaces)
	}
	for i, n := range b.Interfaces {
		mac, err := net.ParseMAC(n.MAC)
		if err != nil || len(mac) != 6 {
			return fmt.Errorf("network-interfaces[%d].mac: want a MAC such as 52:54:00:12:34:56", i)
		}
		name, err := word(n.Name)
		if err != nil {
			return fmt.Errorf("network-interfaces[%d].name: %w", i, err)
		}
		r.MACs = append(r.MACs, mac.String())
		var addr netip.Prefix
		if n.Address != "" {
			if addr, err = netip.ParsePrefix(n.Address); err != nil {
				return fmt.Errorf("network-interfaces[%d].address: want an address with its prefix, such as 192.0.2.10/24", i)
			}
		}
		if n.IsPinned {
			if r.NICNames == nil {
				r.NICNames = map[string]string{}
			}
			r.NICNames[mac.String()] = name
		}
		if !n.IsManagement {
			continue
		}
		if r.Management != nil {
			return fmt.Errorf("network-interfaces[%d]: a second management interface", i)
		}
		r.Management = &ReportInterface{Name: name, MAC: mac.String(), Address: addr}
	}
	return nil
}

func (r *InstallReport) readDisks(b *webhookBody) error {
	if n := len(b.Disks); n > maxReportDisks {
		return fmt.Errorf("%d disks, at most %d", n, maxReportDisks)
	}
	for i, d := range b.Disks {
		if !d.IsBootDisk {
			continue
		}
		serial := d.Udev["ID_SERIAL_SHORT"]
		if serial == "" {
			serial = d.Udev["ID_SERIAL"]
		}
		disk := ReportDisk{Size: d.Size}
		var err error
		if disk.Name, err = word(d.Udev["DEVNAME"]); err != nil {
			return fmt.Errorf("disks[%d] DEVNAME: %w", i, err)
		}
		if disk.Serial, err = word(serial); err != nil {
			return fmt.Errorf("disks[%d] serial: %w", i, err)
		}
		r.BootDisks = append(r.BootDisks, disk)
	}
	return nil
}

// readHostKeys checks each sent host key (ssh.ParseAuthorizedKey: the
// blob decodes as a key of its type) and that it is of its slot's
// algorithm.
func (r *InstallReport) readHostKeys(b *webhookBody) error {
	if b.HostKeys == nil {
		return nil
	}
	for _, k := range []struct{ slot, line string }{
		{"ed25519", b.HostKeys.Ed25519}, {"ecdsa", b.HostKeys.ECDSA}, {"rsa", b.HostKeys.RSA},
	} {
		line := strings.TrimSpace(k.line)
		if line == "" || line == "unknown" {
			continue
		}
		key, err := parseHostKey(line)
		if err != nil {
			return fmt.Errorf("ssh-public-host-keys.%s: %w", k.slot, err)
		}
		typ := key.Type()
		if (k.slot == "ecdsa") != strings.HasPrefix(typ, "ecdsa-sha2-") || (k.slot != "ecdsa" && typ != "ssh-"+k.slot) {
			return fmt.Errorf("ssh-public-host-keys.%s: %w: a %s key", k.slot, ErrInvalidHostKey, typ)
		}
		r.HostKeys = append(r.HostKeys, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key))))
	}
	return nil
}

// parseHostKey parses an OpenSSH public key line ("TYPE BASE64
// [comment]"); its error wraps [ErrInvalidHostKey] and quotes nothing.
func parseHostKey(line string) (ssh.PublicKey, error) {
	if len(line) > 16<<10 {
		return nil, fmt.Errorf("%w: over 16 KiB", ErrInvalidHostKey)
	}
	key, _, _, rest, err := ssh.ParseAuthorizedKey([]byte(line))
	if err != nil || len(bytes.TrimSpace(rest)) > 0 {
		return nil, fmt.Errorf("%w: want one OpenSSH public key, TYPE BASE64 [comment]", ErrInvalidHostKey)
	}
	return key, nil
}

// HostKeyFingerprint is key's SHA-256 fingerprint as ssh-keygen -l prints
// it ("SHA256:…", unpadded base64), or an error for a line that is not a
// key.
func HostKeyFingerprint(line string) (string, error) {
	key, err := parseHostKey(line)
	if err != nil {
		return "", err
	}
	return ssh.FingerprintSHA256(key), nil
}
