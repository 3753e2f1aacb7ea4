package bootassets

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/pxe/discovery"
)

// staticAgent builds a small static Go program to stand in for the
// agent.
func staticAgent(t *testing.T) string {
	t.Helper()
	gobin := needTool(t, "go", "golang")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module agent\n\ngo 1.22\n"), 0o644)
	cmd := exec.Command(gobin, "build", "-o", "agent", ".")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build a static agent: %v\n%s", err, out)
	}
	return filepath.Join(dir, "agent")
}

// baseSquashfs makes a <product>-base.squashfs holding a kernel's
// modules folder: storage modules the initrd takes (with a dependency
// outside its folders), a graphics module it leaves, and a file outside
// the modules.
func baseSquashfs(t *testing.T) []byte {
	t.Helper()
	mk := needTool(t, "mksquashfs", "squashfs-tools")
	needTool(t, "unsquashfs", "squashfs-tools")
	root := t.TempDir()
	mods := filepath.Join(root, "usr/lib/modules/6.8.12-4-pve")
	files := map[string]string{
		"modules.alias": "alias virtio:d00000002v* virtio_blk\nalias pci:v*d*sv*sd*bc01sc08i02* nvme\n",
		"modules.dep": "kernel/drivers/block/virtio_blk.ko.xz:\nkernel/drivers/nvme/host/nvme.ko: kernel/drivers/nvme/host/nvme-core.ko kernel/lib/crc64.ko\nkernel/drivers/nvme/host/nvme-core.ko: kernel/lib/crc64.ko\nkernel/lib/crc64.ko:\nkernel/drivers/gpu/drm/big.ko:\n" +
			"kernel/drivers/char/ipmi/ipmi_si.ko: kernel/drivers/char/ipmi/ipmi_msghandler.ko\nkernel/drivers/char/ipmi/ipmi_devintf.ko: kernel/drivers/char/ipmi/ipmi_msghandler.ko\nkernel/drivers/char/ipmi/ipmi_msghandler.ko:\n",
		"kernel/drivers/block/virtio_blk.ko.xz":       "virtio_blk",
		"kernel/drivers/nvme/host/nvme.ko":            "nvme",
		"kernel/drivers/nvme/host/nvme-core.ko":       "nvme-core",
		"kernel/lib/crc64.ko":                         "crc64",
		"kernel/drivers/gpu/drm/big.ko":               "big",
		"kernel/drivers/char/ipmi/ipmi_si.ko":         "ipmi_si",
		"kernel/drivers/char/ipmi/ipmi_devintf.ko":    "ipmi_devintf",
		"kernel/drivers/char/ipmi/ipmi_msghandler.ko": "ipmi_msghandler",
	}
	for name, data := range files {
		p := filepath.Join(mods, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(data), 0o644)
	}
	os.MkdirAll(filepath.Join(root, "etc"), 0o755)
	os.WriteFile(filepath.Join(root, "etc/shadow"), []byte("secret"), 0o600)
	out := filepath.Join(t.TempDir(), "base.squashfs")
	if b, err := exec.Command(mk, root, out, "-quiet", "-no-progress", "-noappend").CombinedOutput(); err != nil {
		t.Fatalf("mksquashfs: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPrepareBuildsTheDiscoveryInitrd: with a discovery agent, the
// release holds discovery.img: /init (the agent), a console, the
// modules index, the storage modules and the IPMI ones (the agent reads
// the BMC's LAN address through /dev/ipmi0) with their dependencies, from
// the ISO's base squashfs, and not the rest.
func TestPrepareBuildsTheDiscoveryInitrd(t *testing.T) {
	agent := staticAgent(t)
	files := proxmoxLayout(t, testInitrd(t, "gzip", testInit(t)))
	files["pve-base.squashfs"] = baseSquashfs(t)
	iso := buildISO(t, files, isoOpts{})
	state := t.TempDir()
	rel, err := Prepare(context.Background(), PrepareOptions{ISO: iso, StateDir: state, DiscoveryAgent: agent})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(rel.Dir, discovery.InitrdName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []string
	var init []byte
	err = readNewcArchive(bufio.NewReader(f), func(c cpioFile, r io.Reader) error {
		got = append(got, c.Name)
		if c.Name == "init" {
			init, _ = io.ReadAll(r)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	m := "lib/modules/6.8.12-4-pve/"
	for _, want := range []string{"init", "dev/console", "proc", "sys", m + "modules.alias", m + "modules.dep", m + "kernel/drivers/block/virtio_blk.ko.xz",
		m + "kernel/drivers/nvme/host/nvme.ko", m + "kernel/drivers/nvme/host/nvme-core.ko", m + "kernel/lib/crc64.ko",
		m + "kernel/drivers/char/ipmi/ipmi_si.ko", m + "kernel/drivers/char/ipmi/ipmi_devintf.ko", m + "kernel/drivers/char/ipmi/ipmi_msghandler.ko"} {
		if !slices.Contains(got, want) {
			t.Errorf("discovery.img lacks %s; it holds %v", want, got)
		}
	}
	for _, not := range []string{m + "kernel/drivers/gpu/drm/big.ko", "etc/shadow"} {
		if slices.Contains(got, not) {
			t.Errorf("discovery.img holds %s", not)
		}
	}
	want, _ := os.ReadFile(agent)
	if d := cmp.Diff(want, init); d != "" {
		t.Error("/init is not the agent")
	}
	if !slices.ContainsFunc(rel.Assets, func(a Asset) bool { return a.Name == discovery.InitrdName }) {
		t.Errorf("the manifest does not list %s", discovery.InitrdName)
	}
}

func TestPrepareRefusesADynamicAgent(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	if err := checkStatic(sh); !errors.Is(err, ErrNotStatic) {
		// A static sh is possible; then there is nothing to check here.
		if b, _ := os.ReadFile(sh); bytes.Contains(b, []byte("ld-linux")) {
			t.Errorf("checkStatic(%s) = %v, want ErrNotStatic", sh, err)
		}
	}
	if err := checkStatic(staticAgent(t)); err != nil {
		t.Errorf("checkStatic of a CGO_ENABLED=0 build: %v", err)
	}
}
