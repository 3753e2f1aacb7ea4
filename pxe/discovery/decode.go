package discovery

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/answer"
)

// Bounds of a report, checked by [Decode].
const (
	// MaxReportBytes bounds a report's body: 64 KiB.
	MaxReportBytes = 64 << 10
	// MaxNICs bounds a report's network interfaces.
	MaxNICs = 64
	// MaxDisks bounds a report's disks.
	MaxDisks = 128
	// maxText bounds a free-text field (model, vendor, serial).
	maxText = 128
)

// ErrInvalid is wrapped by [Decode]'s error for a report that is not
// one: too large, not JSON, an unknown field, a value of a wrong form.
var ErrInvalid = errors.New("invalid discovery report")

var (
	linkRE      = regexp.MustCompile(`^(unknown|notpresent|down|lowerlayerdown|testing|dormant|up)$`)
	driverRE    = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
	uuidRE      = regexp.MustCompile(`^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$`)
	diskNameRE  = regexp.MustCompile(`^[a-z][a-z0-9]{0,31}$`)
	transportRE = regexp.MustCompile(`^[a-z0-9]{1,16}$`)
)

// Decode reads one report from r: at most [MaxReportBytes], one JSON
// object of exactly the fields of [Report], at most [MaxNICs] NICs and
// [MaxDisks] disks, at least one NIC, no MAC or disk name twice, and
// every field of its form (free text is printable ASCII of at most 128
// bytes). MACs are normalised to lower case with colons. The error
// wraps [ErrInvalid] and names the field.
func Decode(r io.Reader) (Report, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxReportBytes+1))
	if err != nil {
		return Report{}, fmt.Errorf("read discovery report: %w", err)
	}
	if len(data) > MaxReportBytes {
		return Report{}, invalidf("larger than %d bytes", MaxReportBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var rep Report
	if err := dec.Decode(&rep); err != nil {
		return Report{}, invalidf("%v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Report{}, invalidf("data after the report")
	}
	if err := rep.check(); err != nil {
		return Report{}, err
	}
	return rep, nil
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

func (rep *Report) check() error {
	switch {
	case len(rep.NICs) == 0:
		return invalidf("no NIC")
	case len(rep.NICs) > MaxNICs:
		return invalidf("%d NICs, more than %d", len(rep.NICs), MaxNICs)
	case len(rep.Disks) > MaxDisks:
		return invalidf("%d disks, more than %d", len(rep.Disks), MaxDisks)
	}
	seen := map[string]bool{}
	for i := range rep.NICs {
		n := &rep.NICs[i]
		mac, ok := answer.CanonicalMAC(n.MAC)
		if !ok {
			return invalidf("nics[%d].mac %q is not a MAC address", i, n.MAC)
		}
		if seen[mac] {
			return invalidf("nics[%d].mac %s is given twice", i, mac)
		}
		seen[mac], n.MAC = true, mac
		if n.Link != "" && !linkRE.MatchString(n.Link) {
			return invalidf("nics[%d].link %q is not a link state", i, n.Link)
		}
		if n.Driver != "" && !driverRE.MatchString(n.Driver) {
			return invalidf("nics[%d].driver %q is not a driver name", i, n.Driver)
		}
	}
	for name, v := range map[string]string{"dmi.vendor": rep.DMI.Vendor, "dmi.product": rep.DMI.Product, "dmi.serial": rep.DMI.Serial, "cpu.model": rep.CPU.Model} {
		if err := checkText(name, v); err != nil {
			return err
		}
	}
	if rep.DMI.UUID != "" && !uuidRE.MatchString(rep.DMI.UUID) {
		return invalidf("dmi.uuid %q is not a UUID", rep.DMI.UUID)
	}
	if rep.BootMAC != "" {
		mac, ok := answer.CanonicalMAC(rep.BootMAC)
		if !ok || !seen[mac] {
			return invalidf("boot_mac %q is not one of the NICs' MACs", rep.BootMAC)
		}
		rep.BootMAC = mac
	}
	if err := rep.checkBMC(); err != nil {
		return err
	}
	return rep.checkDisks()
}

// checkBMC checks the BMC fields: an IP address, a port and a kind only
// with an address, a kind and an IPMI interface of their lists.
func (rep *Report) checkBMC() error {
	if rep.BMCAddress != "" {
		if a, err := netip.ParseAddr(rep.BMCAddress); err != nil || a.Zone() != "" || a.IsUnspecified() {
			return invalidf("bmc_address %q is not an IP address", rep.BMCAddress)
		}
	}
	switch {
	case rep.BMCAddress == "" && (rep.BMCPort != 0 || rep.BMCKind != ""):
		return invalidf("bmc_port or bmc_kind without a bmc_address")
	case rep.BMCKind != "" && rep.BMCKind != BMCRedfish && rep.BMCKind != BMCIPMI:
		return invalidf("bmc_kind %q: want %s or %s", rep.BMCKind, BMCRedfish, BMCIPMI)
	case rep.BMCIPMI != "" && !slices.Contains(IPMIInterfaces, rep.BMCIPMI):
		return invalidf("bmc_ipmi %q: want one of %s", rep.BMCIPMI, strings.Join(IPMIInterfaces, ", "))
	}
	return nil
}

func (rep *Report) checkDisks() error {
	seen := map[string]bool{}
	for i, d := range rep.Disks {
		if !diskNameRE.MatchString(d.Name) {
			return invalidf("disks[%d].name %q is not a kernel disk name", i, d.Name)
		}
		if seen[d.Name] {
			return invalidf("disks[%d].name %s is given twice", i, d.Name)
		}
		seen[d.Name] = true
		for field, v := range map[string]string{"model": d.Model, "serial": d.Serial, "wwn": d.WWN} {
			if err := checkText(fmt.Sprintf("disks[%d].%s", i, field), v); err != nil {
				return err
			}
		}
		if d.Transport != "" && !transportRE.MatchString(d.Transport) {
			return invalidf("disks[%d].transport %q is not a transport", i, d.Transport)
		}
	}
	return nil
}

// checkText checks a free-text field: printable ASCII, at most maxText
// bytes, no surrounding space.
func checkText(field, v string) error {
	if len(v) > maxText {
		return invalidf("%s is longer than %d bytes", field, maxText)
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return invalidf("%s %q is not printable ASCII", field, v)
		}
	}
	if len(v) > 0 && (v[0] == ' ' || v[len(v)-1] == ' ') {
		return invalidf("%s %q has surrounding space", field, v)
	}
	return nil
}
