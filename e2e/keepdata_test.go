package e2e

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestReinstallKeepsDataPool: a node with a data pool on a disk of its
// own is installed, and the installer emulator, acting out the node's
// first-boot script on the machine's disks (installeremu's pools.go),
// creates the pool: its label heads the disk image. Data is then written
// on that disk past the label. node-provisioner reinstall re-arms the
// node and its next netboot installs again: the script imports the pool
// and the data is still there. reinstall --wipe-data has the install
// after it create the pool anew: the data is gone. After each install
// the node's timeline has the hook's report (first-boot-report): pool
// created, found and imported, created anew with its disks wiped.
func TestReinstallKeepsDataPool(t *testing.T) {
	t.Parallel()
	media := netbootPrereqs(t)
	const mac = "52:54:00:77:47:10"
	l := newLab(t, 47, labOptions{})
	l.serve(t, media)
	dir := t.TempDir()
	_, bootArgs := vmDisk(t, dir, "boot", "64M", "virtio-blk-pci,serial=E2E-KEEP-BOOT")
	dataImg, dataArgs := vmDisk(t, dir, "data", "64M", "virtio-blk-pci,serial=E2E-KEEP-DATA")
	vm := vmOptions{name: "keep", mac: mac, uefi: true, limit: 180 * time.Second, qemuArgs: append(bootArgs, dataArgs...)}
	l.np(t, "register", "keep", "--mac", mac, "--boot-disk", "E2E-KEEP-BOOT", "--pool", "tank=single:E2E-KEEP-DATA")

	const label, userData, at = "PLASMA-EMU-ZPOOL tank\n", "E2E-USER-DATA kept across reinstalls", 64 << 10
	disk := func() []byte {
		t.Helper()
		b, err := os.ReadFile(dataImg)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	install := func(what, wantPools, wantReport string) {
		t.Helper()
		m := l.boot(t, vm)
		m.wantOK(t, "keep.")
		m.wantDetail(t, "disk=vda", "pools="+wantPools)
		// m.took: from power-on, not from the wait for a QEMU slot.
		line := fmt.Sprintf("keepdata %s: %s, power-on to powered off %s", t.Name(), what, m.took.Round(100*time.Millisecond))
		t.Log(line)
		recordTime(line)
		if d := disk(); !bytes.HasPrefix(d, []byte(label)) {
			t.Errorf("%s: the data disk does not start with the pool's label: %q", what, d[:64])
		}
		l.wantEvent(t, "first-boot-report", wantReport)
	}

	install("first install", "tank:created", `"detail":"pool tank created"`)
	f, err := os.OpenFile(dataImg, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(userData), at); err != nil {
		t.Fatal(err)
	}
	f.Close()

	if out := l.np(t, "reinstall", "keep", "--force"); !strings.Contains(out, "keep: re-armed for one install with a new root password; netboot its machine") {
		t.Errorf("reinstall printed %q", out)
	}
	install("reinstall", "tank:imported", "pool tank found and imported, its data kept")
	if d := disk(); !bytes.Equal(d[at:at+len(userData)], []byte(userData)) {
		t.Errorf("after a reinstall the pool's data is gone, want it kept")
	}

	if out := l.np(t, "reinstall", "keep", "--wipe-data", "--force"); !strings.Contains(out, "its data pools to be created anew") {
		t.Errorf("reinstall --wipe-data printed %q", out)
	}
	install("reinstall --wipe-data", "tank:created", "pool tank created anew, its disks wiped")
	if d := disk(); bytes.Contains(d[:1<<20], []byte(userData)) {
		t.Errorf("after reinstall --wipe-data the pool's old data is still there, want it wiped")
	}
}
