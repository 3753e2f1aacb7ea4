package netboot

import (
	"github.com/plasmactl/plasma-node/pxe/bootassets"
	"github.com/plasmactl/plasma-node/pxe/discovery"

	"net/url"
	"strings"
)

// assetsPath is the URL path of the assets.
const assetsPath = "assets"

// ipxeInitrdName is the name iPXE gives the loaded initrd, which the
// kernel's initrd= argument names under UEFI.
const ipxeInitrdName = "initrd"

// defaultKernelArgs is the installer's kernel command line for an
// unattended install (reference §4.4): what prepare-iso --pxe writes for
// its automated entry.
const defaultKernelArgs = "ramdisk_size=16777216 rw quiet splash=silent proxmox-start-auto-installer"

// Platforms of iPXE's ${platform} setting that a script can be rendered
// for.
const (
	// PlatformAny renders a script that picks the platform itself with
	// `iseq ${platform} efi`.
	PlatformAny = ""
	// PlatformBIOS is iPXE built for a PC BIOS ("pcbios").
	PlatformBIOS = "pcbios"
	// PlatformEFI is iPXE built for UEFI ("efi").
	PlatformEFI = "efi"
)

// macVar is what a script puts in its URLs when the request named no MAC.
const macVar = "${netX/mac}"

// bootIFArg is the kernel argument a discovery script passes the agent:
// the NIC iPXE booted from (netX is the network device it opened last)
// in pxelinux's BOOTIF form, "01-" (Ethernet) and the MAC with dashes.
const bootIFArg = "BOOTIF=01-${netX/mac:hexhyp}"

// BootScript is what IPXEScript renders: the installer for one node, or,
// when Node is empty, a script that exits to the next boot device.
type BootScript struct {
	// Node is the registration being installed; empty for an exit script.
	Node string
	// Reason says, for an exit script, why the machine is not installed.
	Reason string
	// BaseURL is the server's concrete URL, such as
	// "http://10.77.0.2:8090" (never ${next-server}: anchors B.7).
	BaseURL string
	// Release is the folder of assets to boot, under /assets/.
	Release string
	// MAC is the machine's normalised MAC address, added to the asset URLs
	// as ?mac= so the downloads join its timeline. Empty: ${netX/mac}.
	MAC string
	// Platform is [PlatformBIOS], [PlatformEFI], or [PlatformAny].
	Platform string
	// KernelArgs is the kernel command line without initrd=, which the
	// script adds under UEFI. Empty: defaultKernelArgs.
	KernelArgs string
	// GrubDevice is the grub device [GrubScript] loads the kernel and
	// initrd from, such as "(tftp)"; empty: grub's http module on
	// BaseURL's host and port.
	GrubDevice string
	// Discovery renders the discovery boot instead (Node empty): the
	// release's kernel with the discovery initrd, KernelArgs carrying
	// the post URL and the window's token; the script adds BOOTIF=,
	// the NIC iPXE booted from.
	Discovery bool
}

// IPXEScript renders an iPXE script. It is a pure function. Line breaks
// and other control characters in the fields become spaces, so a field
// cannot add a command; the caller checks that names and URLs are valid.
//
// The install script loads the kernel and the initrd from
// <BaseURL>/assets/<Release>/ and boots. Under UEFI the kernel line also
// carries initrd=initrd, naming the loaded initrd (the kernel's EFI stub
// needs it, reference §4.5); the initrd is loaded with --name initrd so the
// name holds whatever its URL. For [PlatformAny] the script branches on
// ${platform}; for the others it holds only that platform's lines.
func IPXEScript(s BootScript) string {
	var b strings.Builder
	line := func(parts ...string) {
		for i, p := range parts {
			parts[i] = oneLine(p)
		}
		b.WriteString(strings.Join(parts, ""))
		b.WriteByte('\n')
	}
	line("#!ipxe")
	if s.Node == "" && !s.Discovery {
		reason := s.Reason
		if reason == "" {
			reason = "no pending registration for this machine"
		}
		line("# plasma-node: this machine is not installed now: ", reason, ".")
		line("# Exiting returns to the firmware, which boots the next device, so an")
		line("# installed node never reinstalls.")
		line("echo plasma-node: ", reason, "; booting the next device")
		line("exit")
		return b.String()
	}
	base := strings.TrimSuffix(s.BaseURL, "/") + "/" + assetsPath + "/" + url.PathEscape(s.Release) + "/"
	mac := macVar
	if m, err := normalizeMAC(s.MAC); err == nil {
		mac = m
	}
	kernel := base + bootassets.AssetKernel + "?mac=" + mac
	initrd := base + bootassets.AssetNetbootInitrd + "?mac=" + mac
	args := s.KernelArgs
	if args == "" {
		args = defaultKernelArgs
	}
	if s.Discovery {
		initrd = base + discovery.InitrdName + "?mac=" + mac
		args += " " + bootIFArg
		line("# plasma-node: discovery of an unregistered machine (release ", s.Release, "'s kernel):")
		line("# it reports its NICs, DMI and disks to the window and powers off.")
	} else {
		line("# plasma-node: Proxmox VE automated installer for node ", s.Node, " (release ", s.Release, ").")
	}
	line("# The server address is concrete, not ${next-server}, which can name")
	line("# another host in iPXE's own DHCP round.")
	switch s.Platform {
	case PlatformBIOS:
		line("# Rendered for BIOS (pcbios).")
	case PlatformEFI:
		line("# Rendered for UEFI: initrd=initrd names the loaded initrd for the EFI stub.")
	default:
		line("# Under UEFI, initrd=initrd names the loaded initrd for the EFI stub.")
	}
	if s.Discovery {
		line("echo plasma-node: discovering this machine")
	} else {
		line("echo plasma-node: installing Proxmox VE on ", s.Node)
	}
	switch s.Platform {
	case PlatformBIOS:
		line("kernel ", kernel, " ", args)
	case PlatformEFI:
		line("kernel ", kernel, " ", args, " initrd=", ipxeInitrdName)
	default:
		line("iseq ${platform} efi && goto efi || goto pcbios")
		line(":efi")
		line("kernel ", kernel, " ", args, " initrd=", ipxeInitrdName)
		line("goto initrd")
		line(":pcbios")
		line("kernel ", kernel, " ", args)
		line(":initrd")
	}
	line("initrd --name ", ipxeInitrdName, " ", initrd)
	line("boot")
	return b.String()
}

// rechainScript asks iPXE to fetch the script again with its MAC address
// and platform in the URL.
func rechainScript(baseURL string) string {
	u := strings.TrimSuffix(baseURL, "/") + "/boot.ipxe?mac=" + macVar + "&platform=${platform}"
	return "#!ipxe\n" +
		"# plasma-node: the request named no MAC address; ask again with it.\n" +
		"chain " + oneLine(u) + "\n"
}

// oneLine turns control characters into spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
}
