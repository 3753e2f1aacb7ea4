package answer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"strings"
)

// ErrBadSystemInfo is wrapped by every error of [ParseSystemInfo]: the body
// is not a system-info JSON object, or comes with a content type other than
// JSON.
var ErrBadSystemInfo = errors.New("bad system info")

// SystemInfo is the JSON body the installer POSTs to the answer URL
// (proxmox-fetch-answer): what it knows about the machine before the
// answer exists. Keys are snake_case in every version. It carries no disks,
// no IP addresses and no host keys.
type SystemInfo struct {
	// Schema is "$schema" ({"version":"1.0"}), sent from 8.3 on; nil for
	// 8.2, which sends none.
	Schema *SchemaInfo `json:"$schema,omitempty"`
	// Product is "product": which Proxmox product the ISO installs.
	Product ProductInfo `json:"product"`
	// ISO is "iso": the installer's release, see [SystemInfo.Version].
	ISO ISOInfo `json:"iso"`
	// DMI is "dmi": the firmware's identity strings.
	DMI DMIInfo `json:"dmi"`
	// NetworkInterfaces is "network_interfaces": every link but lo, in the
	// order of ip link. Bridges and virtual links may appear.
	NetworkInterfaces []NetworkInterface `json:"network_interfaces"`
}

// SchemaInfo is the "$schema" object of the system info.
type SchemaInfo struct {
	// Version is the payload format version, "1.0".
	Version string `json:"version"`
}

// ProductInfo is the "product" object of the system info.
type ProductInfo struct {
	// FullName is "fullname", "Proxmox VE".
	FullName string `json:"fullname"`
	// Product is "product": "pve", "pbs", "pmg" or "pdm".
	Product string `json:"product"`
	// EnableBtrfs is "enable_btrfs": whether filesystem btrfs is offered.
	EnableBtrfs bool `json:"enable_btrfs"`
}

// ISOInfo is the "iso" object of the system info.
type ISOInfo struct {
	// Release is "release", the product version: "8.2", "9.1".
	Release string `json:"release"`
	// ISORelease is "isorelease", the ISO respin: "1", "2".
	ISORelease string `json:"isorelease"`
}

// DMIInfo is the "dmi" object of the system info: maps of strings read
// from /sys/devices/virtual/dmi/id. Any key may be absent and any value
// empty.
type DMIInfo struct {
	// System has "serial", "sku", "uuid" and "name".
	System map[string]string `json:"system"`
	// Baseboard has "asset_tag", "serial" and "name".
	Baseboard map[string]string `json:"baseboard"`
	// Chassis has "serial", "sku" and "asset_tag".
	Chassis map[string]string `json:"chassis"`
}

// NetworkInterface is one entry of "network_interfaces".
type NetworkInterface struct {
	// Link is the kernel name, "ens18".
	Link string `json:"link"`
	// MAC is the address as sent: lower case before 9.2, upper case from
	// 9.2. Use [SystemInfo.MACs] for a normalised list.
	MAC string `json:"mac"`
}

// ParseSystemInfo parses the body of the installer's answer request.
//
// It is tolerant where the installers differ: unknown fields are ignored,
// "$schema" may be absent (8.2), and contentType may be empty or any
// application/json, with any parameters, including the 8.2 installer's
// truncated "application/json; charset=utf-". It limits nothing by size
// (the HTTP handler does) but refuses nesting deeper than encoding/json's
// limit without exhausting the stack.
//
// Errors wrap [ErrBadSystemInfo]: another content type, a body that is not
// one JSON object, or a known field of the wrong JSON type.
func ParseSystemInfo(body []byte, contentType string) (*SystemInfo, error) {
	if !jsonContentType(contentType) {
		return nil, fmt.Errorf("parse system info: %w: content type %q, want application/json", ErrBadSystemInfo, contentType)
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, fmt.Errorf("parse system info: %w: want a JSON object", ErrBadSystemInfo)
	}
	var si SystemInfo
	if err := json.Unmarshal(trimmed, &si); err != nil {
		return nil, fmt.Errorf("parse system info: %w: %w", ErrBadSystemInfo, err)
	}
	if n := len(si.NetworkInterfaces); n > MaxInterfaces {
		return nil, fmt.Errorf("parse system info: %w: %w: %d network interfaces, at most %d", ErrBadSystemInfo, ErrTooManyInterfaces, n, MaxInterfaces)
	}
	return &si, nil
}

// MaxInterfaces is the most network interfaces a system info may list:
// 64. A machine has a handful; a body listing thousands of made-up MACs
// would try them all against the MAC-pinned registrations.
const MaxInterfaces = 64

// ErrTooManyInterfaces: a system info lists more than [MaxInterfaces]
// network interfaces. It comes wrapped with [ErrBadSystemInfo].
var ErrTooManyInterfaces = errors.New("too many network interfaces")

// jsonContentType reports whether a request's content type is empty or
// application/json, whatever its parameters.
func jsonContentType(ct string) bool {
	if strings.TrimSpace(ct) == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		// A malformed parameter (the 8.2 installer's "charset=utf-" parses,
		// but be lenient with others): judge the media type alone.
		mt, _, _ = strings.Cut(ct, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
	}
	return mt == "application/json"
}

// Version returns the installer release from iso.release, and false when
// it is missing or unparsable; use [DefaultVersion] then. The release is
// the product's: a PBS or PMG ISO reports its own numbers, which are not
// PVE versions.
func (si *SystemInfo) Version() (Version, bool) {
	v, err := ParseVersion(si.ISO.Release)
	if err != nil {
		return 0, false
	}
	return v, true
}

// MACs returns the MAC addresses of the network interfaces in payload
// order, normalised to lower case with colons ("aa:bb:cc:dd:ee:ff") so
// that 9.2's upper-case form compares equal to older ones. Missing and
// unparsable addresses, the all-zero address, and repeats (a bridge shares
// its port's MAC) are left out.
func (si *SystemInfo) MACs() []string {
	var out []string
	seen := map[string]bool{}
	for _, ni := range si.NetworkInterfaces {
		m, ok := canonicalMAC(ni.MAC)
		if !ok || m == "00:00:00:00:00:00" || seen[m] {
			continue
		}
		seen[m] = true
		out = append(out, m)
	}
	return out
}

// Serial returns dmi.system.serial with surrounding space removed, "" when
// absent. Firmware often fills it with a placeholder such as
// "To be filled by O.E.M.", so it identifies a machine only weakly.
func (si *SystemInfo) Serial() string {
	return strings.TrimSpace(si.DMI.System["serial"])
}

// UUID returns dmi.system.uuid in lower case with surrounding space
// removed, "" when absent.
func (si *SystemInfo) UUID() string {
	return strings.ToLower(strings.TrimSpace(si.DMI.System["uuid"]))
}

// CanonicalMAC normalises a 48-bit MAC address written with colons or
// dashes, in either case and with surrounding space, to lower case with
// colons ("aa:bb:cc:dd:ee:ff"), the form registrations, events and the
// timeline use. It reports false for anything else.
func CanonicalMAC(s string) (string, bool) { return canonicalMAC(s) }

func canonicalMAC(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if len(s) != 17 {
		return "", false
	}
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'F' {
			c += 'a' - 'A'
			b[i] = c
		}
		if i%3 == 2 {
			if c != ':' && c != '-' {
				return "", false
			}
			b[i] = ':'
			continue
		}
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", false
		}
	}
	return string(b), true
}
