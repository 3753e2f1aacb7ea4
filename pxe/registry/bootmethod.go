package registry

import (
	"errors"
	"fmt"

	"github.com/plasmactl/plasma-node/pxe/bmc"
)

// BootMethod is how a machine reaches its installer: [BootNetwork] or
// [BootVirtualMedia]. The empty value is unset: the site's applies
// ([Site.BootOf]).
type BootMethod string

// The boot methods.
const (
	// BootNetwork boots the installer over the network: proxy-DHCP,
	// TFTP or HTTP boot, the window on the machine's segment.
	BootNetwork BootMethod = "network"
	// BootVirtualMedia mounts the installer as a CD through the
	// machine's Redfish BMC, for networks where PXE cannot reach: no
	// DHCP or PXE is needed on the machine's segment.
	BootVirtualMedia BootMethod = "virtual-media"
)

// MediaAnswer is how an installer booted from virtual media gets its
// answer: [MediaAnswerISO], [MediaAnswerHTTP] or [MediaAnswerPartition].
// The empty value is unset: the site's applies, else [MediaAnswerISO].
type MediaAnswer string

// The media answers.
const (
	// MediaAnswerISO puts the node's answer on its medium:
	// /answer.toml and an /auto-installer-mode.toml of mode "iso" in an
	// ISO composed for the node (the installer's --fetch-from iso). It
	// needs no DHCP at all: the answer carries the node's static address.
	MediaAnswerISO MediaAnswer = "iso"
	// MediaAnswerHTTP mounts the release's prepared ISO as it is: its
	// installer fetches the answer over HTTP(S) from the window, as a
	// network boot does. It needs DHCP on the machine's network, not PXE.
	MediaAnswerHTTP MediaAnswer = "http"
	// MediaAnswerPartition mounts the release's ISO with a mode file of
	// mode "partition" (the same for every node, no answer in it) as the
	// CD, and the node's answer on a small answer image of its own,
	// labelled proxmox-ais, as a second medium (a removable disk, USB
	// stick or floppy): the installer's --fetch-from partition. Like
	// [MediaAnswerISO] it needs no DHCP; it needs a BMC with a second
	// medium and an installer of 8.3 or later. The name is the
	// installer's own for the mode.
	MediaAnswerPartition MediaAnswer = "partition"
)

// ErrInvalidBootMethod: a boot method or media answer that is not one of
// the names, or virtual media for a machine without a BMC that has it
// (no BMC, or an IPMI one).
var ErrInvalidBootMethod = errors.New("invalid boot method")

// ErrInvalidMediaAnswer: a media answer that is not one of the names, or
// one given to a registration that boots over the network. It wraps
// [ErrInvalidBootMethod].
var ErrInvalidMediaAnswer = fmt.Errorf("invalid media answer: %w", ErrInvalidBootMethod)

// BootMethodRule and MediaAnswerRule are what a refusal says would be
// valid.
const (
	BootMethodRule  = `"network" or "virtual-media"`
	MediaAnswerRule = `"iso" (the answer on the node's medium), "http" (fetched from the window) or "partition" (the answer on a second, small medium)`
)

// ParseBootMethod reads a boot method by name; "" is unset. The error
// wraps [ErrInvalidBootMethod] and [ErrInvalidRegistration].
func ParseBootMethod(s string) (BootMethod, error) {
	switch m := BootMethod(s); m {
	case "", BootNetwork, BootVirtualMedia:
		return m, nil
	}
	return "", invalid(ErrInvalidBootMethod, "invalid boot method %q: want %s", s, BootMethodRule)
}

// ParseMediaAnswer reads a media answer by name; "" is unset. The error
// wraps [ErrInvalidMediaAnswer] and [ErrInvalidRegistration].
func ParseMediaAnswer(s string) (MediaAnswer, error) {
	switch m := MediaAnswer(s); m {
	case "", MediaAnswerISO, MediaAnswerHTTP, MediaAnswerPartition:
		return m, nil
	}
	return "", invalid(ErrInvalidMediaAnswer, "invalid media answer %q: want %s", s, MediaAnswerRule)
}

// BootOf returns how r's machine boots with s's settings: r's boot
// method, else the site's, else [BootNetwork]; and, for virtual media,
// r's media answer, else the site's, else [MediaAnswerISO] (for the
// network method, "").
func (s Site) BootOf(r Registration) (BootMethod, MediaAnswer) {
	m := BootMethod(first(string(r.BootMethod), string(s.BootMethod), string(BootNetwork)))
	if m != BootVirtualMedia {
		return m, ""
	}
	return m, MediaAnswer(first(string(r.MediaAnswer), string(s.MediaAnswer), string(MediaAnswerISO)))
}

// MediaTLSOf says r's BMC fetches its virtual medium over the window's
// HTTPS: its BMC's media_tls ([BMC.MediaTLS]) or the site's is on.
func (s Site) MediaTLSOf(r Registration) bool {
	return s.MediaTLS || (r.BMC != nil && r.BMC.MediaTLS)
}

// CheckBootMethod refuses a registration whose machine would boot from
// virtual media ([Site.BootOf] with site) without a BMC that has it: no
// BMC at all, or an IPMI one (IPMI has no virtual media). The error
// wraps [ErrInvalidBootMethod] and [ErrInvalidRegistration] and says why.
func CheckBootMethod(r Registration, site Site) error {
	m, _ := site.BootOf(r)
	if m != BootVirtualMedia {
		return nil
	}
	from := "its boot method"
	if r.BootMethod == "" {
		from = "the site's boot method"
	}
	if r.BMC == nil {
		return invalid(ErrInvalidBootMethod, "registration %s: %s is virtual-media, which mounts the installer through the machine's BMC, and it has no BMC: give a redfish:// BMC, or boot it over the network", r.Name, from)
	}
	e, err := bmc.Parse(r.BMC.URL)
	if err != nil {
		return invalid(ErrInvalidBMC, "%v", err)
	}
	if !bmc.HasVirtualMedia(e) {
		return invalid(ErrInvalidBootMethod, "registration %s: %s is virtual-media, and its BMC %s speaks %s, which has no virtual media: give a redfish:// BMC, or boot it over the network", r.Name, from, r.BMC.URL, e.Protocol)
	}
	return nil
}

// validateBoot checks r's own boot method, media answer and media_tls:
// the last two only where r does not boot over the network.
func (r Registration) validateBoot() error {
	if _, err := ParseBootMethod(string(r.BootMethod)); err != nil {
		return err
	}
	if _, err := ParseMediaAnswer(string(r.MediaAnswer)); err != nil {
		return err
	}
	if r.MediaAnswer != "" && r.BootMethod == BootNetwork {
		return invalid(ErrInvalidMediaAnswer, "registration %s: a media answer (%s) is for the virtual-media boot method, and it boots over the network", r.Name, r.MediaAnswer)
	}
	if r.BMC != nil && r.BMC.MediaTLS && r.BootMethod == BootNetwork {
		return invalid(ErrInvalidBootMethod, "registration %s: its BMC's media_tls is for the virtual-media boot method, and it boots over the network", r.Name)
	}
	if r.BootMethod == BootVirtualMedia {
		return CheckBootMethod(r, Site{})
	}
	return nil
}
