package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/plasmactl/plasma-node/pxe/registry"
)

// nicFlags are register's NIC name pinning flags.
type nicFlags struct {
	pin   bool
	names []string
}

func (n *nicFlags) bind(f *pflag.FlagSet) {
	f.BoolVar(&n.pin, "pin-nic-names", false, "pin the NIC names (installers from 9.1): each --mac without a --nic-name becomes nic0, nic1… in order")
	f.StringArrayVar(&n.names, "nic-name", nil, "pin the NIC of this MAC (one of --mac) to NAME, MAC=NAME such as aa:bb:cc:dd:ee:ff=lan0: 2 to 15 letters, digits or _, a letter first (repeatable)")
}

// apply sets r's NIC names from the flags; r.MACs are set. Malformed
// flags are usage errors; the names' rules are r.Validate's.
func (n *nicFlags) apply(r *registry.Registration) error {
	if n.pin && len(r.MACs) == 0 {
		return usageError(fmt.Errorf("--pin-nic-names needs a --mac: the names are pinned by MAC"))
	}
	given := map[string]string{}
	for _, s := range n.names {
		mac, name, ok := strings.Cut(s, "=")
		if !ok || name == "" {
			return usageError(fmt.Errorf("--nic-name %q: want MAC=NAME such as aa:bb:cc:dd:ee:ff=lan0", s))
		}
		m, err := registry.NormalizeMAC(mac)
		if err != nil {
			return usageError(fmt.Errorf("--nic-name %q: %w", s, err))
		}
		given[m] = name
	}
	switch {
	case n.pin:
		r.NICNames = registry.PinNICNames(r.MACs, given)
	case len(given) > 0:
		r.NICNames = given
	}
	return nil
}

// nicNames is " ; NIC names MAC=NAME, …" for register's line, or "".
func nicNames(r registry.Registration) string {
	if len(r.NICNames) == 0 {
		return ""
	}
	var parts []string
	for _, m := range slices.Sorted(maps.Keys(r.NICNames)) {
		parts = append(parts, m+"="+r.NICNames[m])
	}
	return "; NIC names " + strings.Join(parts, ", ")
}
