package registry

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/answer"
)

// ErrInvalidNICName: a registration's NIC name that is not for one of its
// MACs, breaks the installer's rule for interface names
// ([answer.CheckInterfaceName]), or is given to two MACs.
var ErrInvalidNICName = errors.New("invalid NIC name")

// validateNICNames checks r's NIC names. Errors wrap [ErrInvalidNICName].
func (r Registration) validateNICNames() error {
	seen := map[string]string{}
	for _, mac := range slices.Sorted(maps.Keys(r.NICNames)) {
		name := r.NICNames[mac]
		if !slices.Contains(r.MACs, mac) {
			return invalid(ErrInvalidNICName, "registration %s: NIC name for %s: %s is not one of its MACs (%s); pin the MAC too", r.Name, mac, mac, strings.Join(r.MACs, ", "))
		}
		if err := answer.CheckInterfaceName(name); err != nil {
			return invalid(ErrInvalidNICName, "registration %s: NIC name for %s: %s", r.Name, mac, strings.TrimPrefix(err.Error(), answer.ErrInvalid.Error()+": "))
		}
		lower := strings.ToLower(name)
		if other, ok := seen[lower]; ok {
			return invalid(ErrInvalidNICName, "registration %s: NIC name %q is given to two MACs, %s and %s", r.Name, name, other, mac)
		}
		seen[lower] = mac
	}
	return nil
}

// PinNICNames names every MAC of macs: the name given holds, and the
// others, in order, take nic0, nic1… (the installer's own prefix), skipping
// a nicN name already given.
func PinNICNames(macs []string, given map[string]string) map[string]string {
	out := make(map[string]string, len(macs))
	taken := map[string]bool{}
	for m, name := range given {
		out[m] = name
		taken[strings.ToLower(name)] = true
	}
	n := 0
	for _, m := range macs {
		if _, ok := out[m]; ok {
			continue
		}
		for taken[fmt.Sprintf("nic%d", n)] {
			n++
		}
		out[m] = fmt.Sprintf("nic%d", n)
		taken[out[m]] = true
	}
	return out
}

// nicPinning is the answer's network.interface-name-pinning for r: its
// NIC names, else with the site's PinNICNames its MACs as nic0, nic1…;
// nil when it pins none, or for an installer before 9.1 (v zero is the
// newest).
func nicPinning(r Registration, site Site, v answer.Version) *answer.InterfaceNamePinning {
	if v != 0 && !v.AtLeast(answer.Version91) {
		return nil
	}
	names := r.NICNames
	if len(names) == 0 && site.PinNICNames {
		names = PinNICNames(r.MACs, nil)
	}
	if len(names) == 0 {
		return nil
	}
	return &answer.InterfaceNamePinning{Enabled: answer.Ptr(true), Mapping: maps.Clone(names)}
}
