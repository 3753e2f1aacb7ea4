package bootassets

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/pxe/discovery"
)

// ErrNotStatic is wrapped by the error of a discovery agent that is not
// a static executable: an initrd holds no C library for it.
var ErrNotStatic = errors.New("the discovery agent is not a static executable")

// ErrUnsquashfsMissing is wrapped by the error of a discovery initrd
// prepared without unsquashfs (Debian package squashfs-tools).
var ErrUnsquashfsMissing = errors.New("unsquashfs not found (install the Debian package squashfs-tools)")

// discoveryModuleDirs are the folders under a kernel's modules whose
// modules the discovery initrd carries (with their dependencies): the
// buses, storage and wired network drivers, and the IPMI ones (the
// agent reads an IPMI BMC's LAN address through /dev/ipmi0).
var discoveryModuleDirs = []string{
	"kernel/drivers/block/", "kernel/drivers/nvme/", "kernel/drivers/scsi/", "kernel/drivers/ata/",
	"kernel/drivers/message/", "kernel/drivers/virtio/", "kernel/drivers/net/ethernet/", "kernel/drivers/net/virtio_net",
	"kernel/drivers/net/phy/", "kernel/drivers/net/mdio", "kernel/drivers/mmc/", "kernel/drivers/usb/storage/",
	"kernel/drivers/char/ipmi/",
}

// checkStatic refuses an executable that needs a dynamic loader.
func checkStatic(p string) error {
	f, err := elf.Open(p)
	if err != nil {
		return fmt.Errorf("discovery agent %s: not an ELF executable: %w", p, err)
	}
	defer f.Close()
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return fmt.Errorf("discovery agent %s: %w (build it with CGO_ENABLED=0)", p, ErrNotStatic)
		}
	}
	return nil
}

// buildDiscovery writes [discovery.InitrdName] into dir: the agent as
// /init, and the modules of discoveryModuleDirs from the ISO's base
// squashfs.
func (p *preparer) buildDiscovery(ctx context.Context, im *isoImage, dir string) error {
	agent := p.opts.DiscoveryAgent
	if err := checkStatic(agent); err != nil {
		return err
	}
	unsq, err := exec.LookPath("unsquashfs")
	if err != nil {
		return fmt.Errorf("discovery initrd: %w", ErrUnsquashfsMissing)
	}
	product := orString(p.rel.Product, "pve")
	name := "/" + product + "-base.squashfs"
	rec, err := im.lookup(name)
	if err != nil {
		return fmt.Errorf("discovery initrd: the ISO's %s: %w", name, err)
	}
	work, err := os.MkdirTemp(dir, ".discovery-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	r, err := im.open(rec)
	if err != nil {
		return err
	}
	sq := filepath.Join(work, "base.squashfs")
	if _, err := copyAsset(ctx, sq, r, rec.size(), p.prog.counter("extract "+name, rec.size())); err != nil {
		return err
	}
	out := filepath.Join(work, "root")
	cmd := exec.CommandContext(ctx, unsq, "-no-progress", "-no-xattrs", "-d", out, sq, "lib/modules", "usr/lib/modules")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("discovery initrd: unsquashfs %s: %w: %s", name, err, firstLine(string(b)))
	}
	mods, err := modulesDir(out)
	if err != nil {
		return fmt.Errorf("discovery initrd: the ISO's %s: %w", name, err)
	}
	files, err := discoveryModules(mods)
	if err != nil {
		return fmt.Errorf("discovery initrd: %w", err)
	}
	a, err := writeAssetFunc(filepath.Join(dir, discovery.InitrdName), func(w io.Writer) error {
		return writeDiscoveryInitrd(w, agent, mods, files)
	}, nil)
	if err != nil {
		return err
	}
	p.rel.Assets = append(p.rel.Assets, a)
	p.log.Info("discovery initrd built", "modules", len(files), "kernel", filepath.Base(mods))
	return nil
}

// modulesDir finds the one kernel's modules folder under root
// ({usr/,}lib/modules/<version>) holding modules.alias and modules.dep.
func modulesDir(root string) (string, error) {
	var found []string
	for _, base := range []string{"usr/lib/modules", "lib/modules"} {
		ents, _ := os.ReadDir(filepath.Join(root, base))
		for _, e := range ents {
			d := filepath.Join(root, base, e.Name())
			if st, err := os.Stat(filepath.Join(d, "modules.dep")); err == nil && st.Mode().IsRegular() {
				found = append(found, d)
			}
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("no kernel modules folder with modules.dep: %w", fs.ErrNotExist)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%d kernel modules folders; want one", len(found))
}

// discoveryModules returns the module files (relative to mods) the
// discovery initrd carries: those of discoveryModuleDirs and their
// dependencies, from modules.dep.
func discoveryModules(mods string) ([]string, error) {
	f, err := os.Open(filepath.Join(mods, "modules.dep"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	deps := map[string][]string{}
	var order []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		file, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		deps[file] = strings.Fields(rest)
		order = append(order, file)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	var add func(string)
	add = func(m string) {
		if keep[m] || !fs.ValidPath(m) {
			return
		}
		keep[m] = true
		for _, d := range deps[m] {
			add(d)
		}
	}
	for _, m := range order {
		if strings.Contains(m, "/wireless/") {
			continue
		}
		for _, pre := range discoveryModuleDirs {
			if strings.HasPrefix(m, pre) {
				add(m)
			}
		}
	}
	out := make([]string, 0, len(keep))
	for m := range keep {
		out = append(out, m)
	}
	slices.Sort(out)
	return out, nil
}

// writeDiscoveryInitrd writes the newc archive: the folders, a console
// device node, /init, the modules index files and the modules.
func writeDiscoveryInitrd(w io.Writer, agent, mods string, files []string) error {
	cw := &newcWriter{w: w}
	ver := filepath.Base(mods)
	base := "lib/modules/" + ver
	dirs := []string{"dev", "proc", "sys", "lib", "lib/modules", base}
	for _, f := range files {
		for d := path.Dir(base + "/" + f); d != base; d = path.Dir(d) {
			dirs = append(dirs, d)
		}
	}
	slices.Sort(dirs)
	for _, d := range slices.Compact(dirs) {
		if err := cw.file(newcEntry{Name: d, Mode: 0o40755}, bytes.NewReader(nil)); err != nil {
			return err
		}
	}
	if err := cw.file(newcEntry{Name: "dev/console", Mode: 0o20600, RdevMajor: 5, RdevMinor: 1}, bytes.NewReader(nil)); err != nil {
		return err
	}
	root, err := os.OpenRoot(mods)
	if err != nil {
		return err
	}
	defer root.Close()
	// The modules are opened inside their folder: a symlink of the ISO
	// leaving it is refused.
	add := func(name, src string, mode uint32) error {
		f, err := root.Open(src)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", src)
		}
		return cw.file(newcEntry{Name: name, Mode: 0o100000 | mode, Size: st.Size()}, f)
	}
	init, err := os.ReadFile(agent)
	if err != nil {
		return err
	}
	if err := cw.file(newcEntry{Name: "init", Mode: 0o100755, Size: int64(len(init))}, bytes.NewReader(init)); err != nil {
		return err
	}
	for _, f := range append([]string{"modules.alias", "modules.dep"}, files...) {
		if err := add(base+"/"+f, f, 0o644); err != nil {
			return err
		}
	}
	return cw.close()
}
