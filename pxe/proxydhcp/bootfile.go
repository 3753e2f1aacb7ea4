package proxydhcp

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"github.com/insomniacslk/dhcp/iana"
)

// Names of the iPXE binaries in Debian's ipxe package (/usr/lib/ipxe), the
// ones a TFTP root holds and [SelectBoot] offers.
const (
	// BIOSBinary is the iPXE build for legacy BIOS PXE ROMs; it drives the
	// NIC through the ROM's UNDI stack.
	BIOSBinary = "undionly.kpxe"
	// UEFIBinary is the x86-64 UEFI iPXE build with all of iPXE's drivers.
	// It is the default of [BootConfig.UEFIBinary].
	UEFIBinary = "ipxe.efi"
	// SNPOnlyBinary is the x86-64 UEFI iPXE build that uses only the
	// firmware's network driver (SNP); some NIC and firmware pairs boot
	// only with it.
	SNPOnlyBinary = "snponly.efi"
	// ShimBinary is the first stage of the Secure Boot chain: a shim
	// signed by Microsoft's UEFI CA, which firmware with Secure Boot on
	// runs and which then loads [GrubBinary] from the same folder.
	ShimBinary = "shimx64.efi"
	// GrubBinary is the second stage of the Secure Boot chain: a grub
	// image signed by a key the shim trusts, with network modules. Shim
	// loads it by this name from the folder it was loaded from.
	GrubBinary = "grubx64.efi"
)

// Vendor classes (DHCP option 60) of network-booting firmware. A request's
// class starts with one of them; a reply carries it exactly.
const (
	// ClassPXE is the class of PXE ROMs, UEFI PXE and iPXE.
	ClassPXE = "PXEClient"
	// ClassHTTP is the class of UEFI HTTP boot; the UEFI specification
	// requires the reply to carry exactly these 10 bytes.
	ClassHTTP = "HTTPClient"
)

// maxBootFile is the size of the BOOTP header's file field less its
// terminating NUL: a longer boot file name or URL cannot be offered.
const maxBootFile = 127

// Client is what one DHCP request tells about the machine that sent it.
// [ParseClient] fills it from a packet.
type Client struct {
	// MAC is the client hardware address (chaddr).
	MAC net.HardwareAddr
	// Archs are the client system architectures of option 93, in the order
	// sent; [SelectBoot] uses the first. When option 93 is missing or
	// malformed, the "Arch:xxxxx" field of option 60 is used, if any.
	Archs []iana.Arch
	// Class is [ClassPXE] or [ClassHTTP] when option 60 starts with it,
	// else empty: the machine is not network-booting.
	Class string
	// VendorClass is option 60 as sent, for logs.
	VendorClass string
	// IPXE reports that the client already runs iPXE: its user class
	// (option 77) is "iPXE" or it sent iPXE's encapsulated options (175).
	IPXE bool
	// Relay is the relay agent's address (giaddr); invalid when the
	// request was not relayed.
	Relay netip.Addr
}

// ArchName describes the client's first architecture for logs and
// timelines, for example "7 (UEFI x86-64)", or "none" when it sent none.
func (c Client) ArchName() string {
	if len(c.Archs) == 0 {
		return "none"
	}
	return archName(c.Archs[0])
}

// archNames uses the IANA registry's meaning, with 7 and 9 both x86-64
// (RFC 4578 erratum 4624; firmware sends either).
var archNames = map[iana.Arch]string{
	iana.INTEL_X86PC:      "BIOS",
	iana.EFI_IA32:         "UEFI IA32",
	iana.EFI_X86_64:       "UEFI x86-64",
	iana.EFI_BC:           "UEFI x86-64",
	iana.EFI_ARM32:        "UEFI ARM32",
	iana.EFI_ARM64:        "UEFI arm64",
	iana.EFI_X86_HTTP:     "UEFI IA32 HTTP",
	iana.EFI_X86_64_HTTP:  "UEFI x86-64 HTTP",
	iana.EFI_BC_HTTP:      "UEFI x86-64 HTTP",
	iana.EFI_ARM32_HTTP:   "UEFI ARM32 HTTP",
	iana.EFI_ARM64_HTTP:   "UEFI arm64 HTTP",
	iana.INTEL_X86PC_HTTP: "BIOS HTTP",
}

// archLabels are archName's results for the architectures of archNames,
// made once: archName is on the path of every DHCP request.
var archLabels = func() map[iana.Arch]string {
	m := make(map[iana.Arch]string, len(archNames))
	for a, n := range archNames {
		m[a] = fmt.Sprintf("%d (%s)", a, n)
	}
	return m
}()

func archName(a iana.Arch) string {
	if l, ok := archLabels[a]; ok {
		return l
	}
	return fmt.Sprintf("%d (%s)", a, a.String())
}

// BootConfig says which boot files exist and where. The zero value offers
// only TFTP boot files: HTTP boot and iPXE scripts need their URLs.
type BootConfig struct {
	// UEFIBinary is the x86-64 UEFI binary in the TFTP root, [UEFIBinary]
	// or [SNPOnlyBinary]. Default: [UEFIBinary].
	UEFIBinary string
	// ARM64Binary is the arm64 UEFI iPXE binary in the TFTP root; empty
	// when none is staged, and arm64 clients are then not answered.
	ARM64Binary string
	// HTTPBase is the URL of the folder that serves the TFTP root's
	// binaries over HTTP, for example "http://192.0.2.10:8090/ipxe"; UEFI
	// HTTP boot clients get HTTPBase + "/" + the binary. Empty: HTTP boot
	// clients are not answered.
	HTTPBase string
	// SecureBoot offers the Secure Boot chain ([ShimBinary]) instead of
	// iPXE to every UEFI x86-64 client, over TFTP to PXE clients and over
	// HTTP (HTTPBase) to HTTP boot clients: firmware with Secure Boot on
	// runs no iPXE binary.
	SecureBoot bool
	// SecureBootFor, when set, reports whether the machine with this MAC
	// boots the Secure Boot chain when SecureBoot is off (a registration
	// that asks for it). It is called for UEFI x86-64 clients only, on
	// the offer path, so it must be cheap.
	SecureBootFor func(mac net.HardwareAddr) bool
	// ScriptURL is the URL of the iPXE script, with this server's concrete
	// address (not ${next-server}), for example
	// "http://192.0.2.10:8090/boot.ipxe". A client already in iPXE gets it
	// with "mac=<its MAC>" added to the query. Empty: iPXE clients are not
	// answered (offering the binary again would loop).
	ScriptURL string
}

// Validate reports a configuration that cannot produce a usable offer:
// URLs that are not absolute http(s) URLs with a concrete host, binary
// names that are not plain file names, or boot URLs too long for the
// BOOTP file field. Its errors match [ErrInvalidConfig].
func (c BootConfig) Validate() error {
	for _, b := range []struct{ field, name string }{{"UEFIBinary", c.UEFIBinary}, {"ARM64Binary", c.ARM64Binary}} {
		if b.name != "" && !validBinaryName(b.name) {
			return fmt.Errorf("%w: %s %q: want a plain file name such as %q", ErrInvalidConfig, b.field, b.name, UEFIBinary)
		}
	}
	for _, u := range []struct{ field, url, suffix string }{
		{"HTTPBase", c.HTTPBase, "/" + longest(longest(c.uefiBinary(), c.ARM64Binary), c.shimIfUsed())},
		{"ScriptURL", c.ScriptURL, "?mac=00:00:00:00:00:00"},
	} {
		if u.url == "" {
			continue
		}
		p, err := url.Parse(u.url)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || strings.Contains(u.url, "${") {
			return fmt.Errorf("%w: %s %q: want an absolute http:// or https:// URL with this server's address", ErrInvalidConfig, u.field, u.url)
		}
		if n := len(strings.TrimSuffix(u.url, "/")) + len(u.suffix); n > maxBootFile {
			return fmt.Errorf("%w: %s %q: boot URLs built from it are %d bytes, the BOOTP file field holds %d", ErrInvalidConfig, u.field, u.url, n, maxBootFile)
		}
	}
	return nil
}

func longest(a, b string) string {
	if len(b) > len(a) {
		return b
	}
	return a
}

func validBinaryName(n string) bool {
	return n != "." && n != ".." && len(n) <= 255 && !strings.ContainsAny(n, "/\\\x00")
}

// shimIfUsed is [ShimBinary] when Secure Boot may be offered, else "".
func (c BootConfig) shimIfUsed() string {
	if c.SecureBoot || c.SecureBootFor != nil {
		return ShimBinary
	}
	return ""
}

func (c BootConfig) uefiBinary() string {
	if c.UEFIBinary == "" {
		return UEFIBinary
	}
	return c.UEFIBinary
}

// uefiBinaryFor is the x86-64 UEFI boot file of the machine mac: the
// shim of the Secure Boot chain for the window or the machine, else the
// iPXE binary.
func (c BootConfig) uefiBinaryFor(mac net.HardwareAddr) string {
	if c.SecureBoot || (c.SecureBootFor != nil && c.SecureBootFor(mac)) {
		return ShimBinary
	}
	return c.uefiBinary()
}

// Boot is the outcome of [SelectBoot]: what to offer a client, or why not.
type Boot struct {
	// Ignore is true when the client gets no answer; Reason says why.
	Ignore bool
	// File is the boot file: a name in the TFTP root, or an http(s) URL
	// for HTTP boot clients and iPXE.
	File string
	// Class is the vendor class (option 60) to answer with, [ClassPXE] or
	// [ClassHTTP].
	Class string
	// Reason is a short sentence for logs and boot timelines.
	Reason string
}

func ignore(format string, args ...any) Boot {
	return Boot{Ignore: true, Reason: fmt.Sprintf(format, args...)}
}

// SelectBoot picks the boot file for a client, following the boot-file
// matrix of the proxy-DHCP reference (§12.3):
//
//   - a client already in iPXE (user class "iPXE" or option 175) gets the
//     iPXE script URL for its MAC, whatever its architecture, so it does
//     not download iPXE again;
//   - an HTTP boot client (class HTTPClient) gets the http(s) URL of the
//     UEFI binary for its architecture (x86-64: 16, or 7 and 9; arm64: 19
//     or 11), answered with class HTTPClient;
//   - a PXE client gets, over TFTP: BIOS (0) [BIOSBinary]; UEFI x86-64 (7
//     and 9, both seen in the field) the configured UEFI binary; UEFI
//     arm64 (11) the arm64 binary when one is staged;
//   - with Secure Boot (for the window, or for the machine), a UEFI x86-64
//     client gets [ShimBinary] instead of the UEFI binary, over TFTP or
//     HTTP as above.
//
// Every other client is ignored: no PXE or HTTP class, no architecture,
// an architecture without a binary, or a missing URL. SelectBoot does not
// check whether the machine is allowed to boot; see [Reply].
func SelectBoot(c Client, cfg BootConfig) Boot {
	switch c.Class {
	case ClassPXE, ClassHTTP:
	default:
		return ignore("not a PXE or HTTP boot client (vendor class %q)", c.VendorClass)
	}
	if c.IPXE {
		if cfg.ScriptURL == "" {
			return ignore("iPXE client, but no iPXE script URL is configured")
		}
		return Boot{File: scriptURL(cfg.ScriptURL, c.MAC), Class: ClassPXE, Reason: "client already runs iPXE: its boot script"}
	}
	if len(c.Archs) == 0 {
		return ignore("no client architecture (option 93) sent")
	}
	arch := c.Archs[0]
	if c.Class == ClassHTTP {
		var bin string
		switch arch {
		case iana.EFI_X86_64_HTTP, iana.EFI_BC_HTTP, iana.EFI_X86_64, iana.EFI_BC:
			bin = cfg.uefiBinaryFor(c.MAC)
		case iana.EFI_ARM64_HTTP, iana.EFI_ARM64:
			if cfg.ARM64Binary == "" {
				return ignore("HTTP boot client of architecture %s, but no arm64 iPXE binary is staged", archName(arch))
			}
			bin = cfg.ARM64Binary
		default:
			return ignore("HTTP boot client of architecture %s, for which no iPXE binary is staged", archName(arch))
		}
		if cfg.HTTPBase == "" {
			return ignore("HTTP boot client of architecture %s, but HTTP boot is not configured", archName(arch))
		}
		return Boot{
			File:   strings.TrimSuffix(cfg.HTTPBase, "/") + "/" + bin,
			Class:  ClassHTTP,
			Reason: "HTTP boot client of architecture " + archName(arch) + ": " + bin + " over HTTP",
		}
	}
	var bin string
	switch arch {
	case iana.INTEL_X86PC:
		bin = BIOSBinary
	case iana.EFI_X86_64, iana.EFI_BC:
		bin = cfg.uefiBinaryFor(c.MAC)
	case iana.EFI_ARM64:
		if cfg.ARM64Binary == "" {
			return ignore("PXE client of architecture %s, but no arm64 iPXE binary is staged", archName(arch))
		}
		bin = cfg.ARM64Binary
	default:
		return ignore("PXE client of architecture %s, for which no iPXE binary is staged", archName(arch))
	}
	return Boot{File: bin, Class: ClassPXE, Reason: tftpReason(arch, bin)}
}

// scriptURL adds the client's MAC to the script URL. The MAC is the
// request's own chaddr, written out rather than left to iPXE's ${mac}
// expansion, so the script is the one of the NIC that asked.
// tftpReasons are the reasons of SelectBoot's TFTP choices for the
// standard binaries, made once: a reply's reason then costs no
// allocation.
var tftpReasons = func() map[tftpChoice]string {
	m := map[tftpChoice]string{}
	for a := range archNames {
		for _, bin := range []string{BIOSBinary, UEFIBinary, SNPOnlyBinary} {
			m[tftpChoice{a, bin}] = "PXE client of architecture " + archName(a) + ": " + bin + " over TFTP"
		}
	}
	return m
}()

type tftpChoice struct {
	arch iana.Arch
	bin  string
}

// tftpReason is why SelectBoot offers bin over TFTP to a client of arch.
func tftpReason(arch iana.Arch, bin string) string {
	if r, ok := tftpReasons[tftpChoice{arch, bin}]; ok {
		return r
	}
	return "PXE client of architecture " + archName(arch) + ": " + bin + " over TFTP"
}

func scriptURL(base string, mac net.HardwareAddr) string {
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "mac=" + mac.String()
}
