package registry

// BootMethod is how a registered machine reaches the installer.
type BootMethod string

// Boot methods.
const (
	// BootNetwork: the machine network-boots on the window's segment
	// (proxy-DHCP, TFTP or HTTP boot). A registration without a method
	// has this one.
	BootNetwork BootMethod = "network"
	// BootVirtualMedia: the machine's BMC (Redfish) lends it the
	// installer as a virtual CD, fetched from the window, and boots it
	// once; no DHCP or PXE on the machine's network is needed.
	BootVirtualMedia BootMethod = "virtual-media"
)

// ParseBootMethod reads a boot method: "" is [BootNetwork]. Errors wrap
// [ErrInvalidRegistration].
func ParseBootMethod(s string) (BootMethod, error) {
	switch m := BootMethod(s); m {
	case "":
		return BootNetwork, nil
	case BootNetwork, BootVirtualMedia:
		return m, nil
	}
	return "", invalid(ErrInvalidRegistration, "boot method %q (want network or virtual-media)", s)
}

// Method is the registration's boot method: [BootNetwork] when it names
// none.
func (r Registration) Method() BootMethod {
	if r.BootMethod == "" {
		return BootNetwork
	}
	return r.BootMethod
}
