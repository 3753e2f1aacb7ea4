package enrol

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// Mismatch returns why the machine of rep does not match m, "" when it
// does: the first field it fails, in words an operator reads, such as
// "disk sda: size 120 GB below 200 GB".
func (m Match) Mismatch(rep discovery.Report) string {
	for _, g := range []struct{ what, glob, v string }{
		{"DMI vendor", m.Vendor, rep.DMI.Vendor},
		{"DMI product", m.Product, rep.DMI.Product},
		{"DMI serial", m.Serial, rep.DMI.Serial},
	} {
		if g.glob != "" && !glob(g.glob, g.v) {
			return fmt.Sprintf("%s %q does not match %q", g.what, g.v, g.glob)
		}
	}
	if m.NICs != nil {
		if why := m.NICs.miss(len(rep.NICs), "NICs"); why != "" {
			return why
		}
	}
	if m.MACPrefix != "" {
		p := normPrefix(m.MACPrefix)
		if !slices.ContainsFunc(rep.MACs(), func(mac string) bool { return strings.HasPrefix(mac, p) }) {
			return fmt.Sprintf("no MAC starts with %s (MACs %s)", p, strings.Join(rep.MACs(), ", "))
		}
	}
	if m.Memory != nil {
		if why := m.Memory.miss(Size(rep.MemoryBytes), "memory"); why != "" {
			return why
		}
	}
	if m.CPUs != nil {
		if why := m.CPUs.miss(int(rep.CPU.Threads), "CPUs"); why != "" {
			return why
		}
	}
	if m.BootNIC != nil {
		if why := m.BootNIC.mismatch(rep); why != "" {
			return why
		}
	}
	if m.Disks != nil {
		return m.Disks.mismatch(rep.Disks)
	}
	return ""
}

// mismatch returns why the NIC rep booted from fails m, "" when it
// passes.
func (m NICMatch) mismatch(rep discovery.Report) string {
	i := slices.IndexFunc(rep.NICs, func(n discovery.NIC) bool { return n.MAC == rep.BootMAC })
	if rep.BootMAC == "" || i < 0 {
		return "its report does not say which NIC it booted from"
	}
	n := rep.NICs[i]
	if p := normPrefix(m.MACPrefix); p != "" && !strings.HasPrefix(n.MAC, p) {
		return fmt.Sprintf("boot NIC %s does not start with %s", n.MAC, p)
	}
	if m.Driver != "" && !glob(m.Driver, n.Driver) {
		return fmt.Sprintf("boot NIC %s: driver %q does not match %q", n.MAC, n.Driver, m.Driver)
	}
	return ""
}

func normPrefix(p string) string { return strings.ToLower(strings.ReplaceAll(p, "-", ":")) }

// empty reports whether m sets no field.
func (m Match) empty() bool {
	return m.Vendor == "" && m.Product == "" && m.Serial == "" && m.NICs == nil && m.MACPrefix == "" &&
		m.Disks == nil && m.Memory == nil && m.CPUs == nil && m.BootNIC == nil
}

func glob(pattern, s string) bool {
	ok, err := path.Match(strings.ToLower(pattern), strings.ToLower(s))
	return ok && err == nil
}

func (r Range) miss(n int, what string) string {
	switch {
	case n < r.Min:
		return fmt.Sprintf("%d %s, fewer than %d", n, what, r.Min)
	case r.Max > 0 && n > r.Max:
		return fmt.Sprintf("%d %s, more than %d", n, what, r.Max)
	}
	return ""
}

func (r SizeRange) miss(n Size, what string) string {
	switch {
	case n < r.Min:
		return fmt.Sprintf("%s %s below %s", what, n, r.Min)
	case r.Max > 0 && n > r.Max:
		return fmt.Sprintf("%s %s above %s", what, n, r.Max)
	}
	return ""
}

// miss returns why d fails f, "" when it passes.
func (f DiskFilter) miss(d discovery.Disk) string {
	if why := (SizeRange{f.MinSize, f.MaxSize}).miss(Size(d.SizeBytes), "size"); why != "" {
		return why
	}
	if f.Model != "" && !glob(f.Model, d.Model) {
		return fmt.Sprintf("model %q does not match %q", d.Model, f.Model)
	}
	if f.Rotational != nil && d.Rotational != *f.Rotational {
		if d.Rotational {
			return "rotational"
		}
		return "not rotational"
	}
	if f.Transport != "" && !strings.EqualFold(d.Transport, f.Transport) {
		return fmt.Sprintf("transport %s, not %s", dash(d.Transport), f.Transport)
	}
	return ""
}

func dash(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// mismatch returns why disks fail m, "" when they pass.
func (m DiskMatch) mismatch(disks []discovery.Disk) string {
	var pass int
	var whys []string
	for _, d := range disks {
		if why := m.miss(d); why != "" {
			whys = append(whys, "disk "+d.Name+": "+why)
			continue
		}
		pass++
	}
	if m.Count != nil {
		if why := m.Count.miss(pass, "disks match"); why != "" {
			return why
		}
		return ""
	}
	switch {
	case pass > 0:
		return ""
	case len(disks) == 0:
		return "no disks"
	}
	return strings.Join(whys, "; ")
}

// choice is the disks a rule chose on a machine.
type choice struct {
	boot  discovery.Disk
	pools []registry.DataPool
}

// chooseDisks chooses the boot disk and pools of d on the machine's
// disks, or says why it cannot. Disks are named by serial: a disk
// without one cannot be chosen.
func (d Disks) choose(disks []discovery.Disk) (choice, string) {
	var c choice
	left := slices.DeleteFunc(slices.Clone(disks), func(x discovery.Disk) bool { return x.Serial == "" })
	slices.SortStableFunc(left, func(a, b discovery.Disk) int {
		return cmp.Or(cmp.Compare(a.SizeBytes, b.SizeBytes), strings.Compare(a.Name, b.Name))
	})
	if len(left) == 0 {
		return c, "no disk with a serial to choose as the boot disk"
	}
	boot := d.Boot
	if boot == nil {
		// The smallest non-rotational disk, else the smallest.
		i := max(slices.IndexFunc(left, func(x discovery.Disk) bool { return !x.Rotational }), 0)
		c.boot = left[i]
		left = slices.Delete(left, i, i+1)
	} else {
		var cands []int
		var whys []string
		for i, x := range left {
			if why := boot.miss(x); why != "" {
				whys = append(whys, "disk "+x.Name+": "+why)
				continue
			}
			cands = append(cands, i)
		}
		if len(cands) == 0 {
			return c, "no boot disk: " + strings.Join(whys, "; ")
		}
		i := cands[0]
		if boot.Pick == PickLargest {
			i = cands[len(cands)-1]
		}
		c.boot = left[i]
		left = slices.Delete(left, i, i+1)
	}
	for _, p := range d.Pools {
		var took []string
		left = slices.DeleteFunc(left, func(x discovery.Disk) bool {
			if p.Count > 0 && len(took) == p.Count || p.Disks.miss(x) != "" {
				return false
			}
			took = append(took, x.Serial)
			return true
		})
		dp := registry.DataPool{Name: p.Name, Layout: p.Layout, Disks: took}
		if p.Count > 0 && len(took) < p.Count {
			return c, fmt.Sprintf("pool %s: %d disks left that fit, want %d", p.Name, len(took), p.Count)
		}
		if err := dp.Validate(); err != nil {
			return c, fmt.Sprintf("pool %s: %d disks left that fit: %v", p.Name, len(took), err)
		}
		c.pools = append(c.pools, dp)
	}
	return c, ""
}

// pathMatch checks a glob's syntax.
func pathMatch(g string) (bool, error) { return path.Match(g, "") }
