package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/discovery"
)

func TestParseCmdline(t *testing.T) {
	cases := map[string]struct {
		cmdline string
		want    Target
		wantErr bool
	}{
		"the window's URL and token":  {"quiet plasma.discover.url=http://10.0.0.2:8090/discovery plasma.discover.token=abc console=ttyS0", Target{"http://10.0.0.2:8090/discovery", "abc"}, false},
		"no token":                    {"plasma.discover.url=http://10.0.0.2/discovery", Target{}, true},
		"a URL that is not http(s)":   {"plasma.discover.url=file:///etc/passwd plasma.discover.token=abc", Target{}, true},
		"an installer's command line": {"ramdisk_size=16777216 rw quiet proxmox-start-auto-installer", Target{}, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parseCmdline(tc.cmdline)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("parseCmdline = %+v, %v; want %+v, error %v", got, err, tc.want, tc.wantErr)
			}
			if err != nil && !errors.Is(err, ErrNoWindow) {
				t.Errorf("the error %v is not ErrNoWindow", err)
			}
		})
	}
}

const aliases = `# Aliases extracted from modules themselves.
alias virtio:d00000002v* virtio_blk
alias pci:v00001B36d00000010sv*sd*bc*sc*i* nvme
alias pci:v00001AF4d*sv*sd*bc*sc*i* virtio_pci
alias pci:v*d*sv*sd*bc01sc08i02* nvme
`

const deps = `kernel/drivers/block/virtio_blk.ko.xz: kernel/drivers/virtio/virtio_ring.ko.xz kernel/drivers/virtio/virtio.ko.xz
kernel/drivers/nvme/host/nvme.ko: kernel/drivers/nvme/host/nvme-core.ko
kernel/drivers/nvme/host/nvme-core.ko:
kernel/drivers/virtio/virtio_pci.ko: kernel/drivers/virtio/virtio_ring.ko.xz kernel/drivers/virtio/virtio.ko.xz
kernel/drivers/virtio/virtio_ring.ko.xz: kernel/drivers/virtio/virtio.ko.xz
kernel/drivers/virtio/virtio.ko.xz:
`

func TestModulesForModaliasesLoadDependenciesFirst(t *testing.T) {
	m, err := parseModules(strings.NewReader(aliases), strings.NewReader(deps))
	if err != nil {
		t.Fatal(err)
	}
	names := m.For([]string{"pci:v00001AF4d00001001sv00001AF4sd00000002bc01sc00i00", "pci:v00001B36d00000010sv00001AF4sd00001100bc01sc08i02", "virtio:d00000002v00001AF4"})
	if d := cmp.Diff([]string{"virtio_pci", "nvme", "virtio_blk"}, names); d != "" {
		t.Errorf("For (-want +got):\n%s", d)
	}
	done := map[string]bool{}
	got := m.Order(names, done)
	want := []string{
		"kernel/drivers/virtio/virtio.ko.xz", "kernel/drivers/virtio/virtio_ring.ko.xz", "kernel/drivers/virtio/virtio_pci.ko",
		"kernel/drivers/nvme/host/nvme-core.ko", "kernel/drivers/nvme/host/nvme.ko", "kernel/drivers/block/virtio_blk.ko.xz",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Order (-want +got):\n%s", d)
	}
	if again := m.Order(names, done); len(again) != 0 {
		t.Errorf("a second round loads %v again", again)
	}
}

// write makes a file of a fake sysfs or procfs tree.
func write(t *testing.T, root, p, data string) {
	t.Helper()
	full := filepath.Join(root, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func link(t *testing.T, root, p, target string) {
	t.Helper()
	full := filepath.Join(root, p)
	os.MkdirAll(filepath.Dir(full), 0o755)
	if err := os.Symlink(target, full); err != nil {
		t.Fatal(err)
	}
}

// TestCollectReadsSysfsAndProcfs reads a fake tree shaped as QEMU's
// machine with a virtio NIC, two virtio disks, an NVMe disk and a SATA
// disk shows it.
func TestCollectReadsSysfsAndProcfs(t *testing.T) {
	sys, proc := t.TempDir(), t.TempDir()
	dev := filepath.Join(sys, "devices/pci0000:00")
	for _, f := range [][2]string{
		{"class/dmi/id/sys_vendor", "QEMU\n"}, {"class/dmi/id/product_name", "Standard PC (Q35 + ICH9, 2009)\n"},
		{"class/dmi/id/product_serial", "DISCO-1\n"}, {"class/dmi/id/product_uuid", "1E0A7C4E-3D2B-4C8A-9F00-123456789ABC\n"},
		{"class/net/eth0/address", "52:54:00:AA:00:01\n"}, {"class/net/eth0/type", "1\n"}, {"class/net/eth0/operstate", "up\n"}, {"class/net/eth0/speed", "-1\n"},
		{"class/net/lo/address", "00:00:00:00:00:00\n"}, {"class/net/lo/type", "772\n"},
		{"block/vda/size", "16777216\n"}, {"block/vda/serial", "VIRT-A\n"}, {"block/vda/queue/rotational", "1\n"},
		{"block/nvme0n1/size", "8388608\n"}, {"block/nvme0n1/wwid", "eui.0001\n"}, {"block/nvme0n1/queue/rotational", "0\n"},
		{"block/sda/size", "2048\n"}, {"block/sda/queue/rotational", "0\n"},
		{"block/loop0/size", "100\n"},
		{"devices/pci0000:00/0000:00:04.0/nvme/nvme0/serial", "NVME-1              \n"},
		{"devices/pci0000:00/0000:00:04.0/nvme/nvme0/model", "QEMU NVMe Ctrl\n"},
		{"devices/pci0000:00/0000:00:05.0/ata1/host0/target0/0:0:0:0/model", "QEMU HARDDISK\n"},
		{"devices/pci0000:00/0000:00:05.0/ata1/host0/target0/0:0:0:0/vpd_pg80", "\x00\x80\x00\x06SATA-1"},
		{"devices/pci0000:00/0000:00:03.0/virtio1/block/vda/x", ""},
		{"devices/pci0000:00/0000:00:02.0/virtio0/drivers/virtio_net/x", ""},
	} {
		write(t, sys, f[0], f[1])
	}
	link(t, sys, "class/net/eth0/device", filepath.Join(dev, "0000:00:02.0/virtio0"))
	link(t, sys, "class/net/eth0/device/driver", filepath.Join(dev, "0000:00:02.0/virtio0/drivers/virtio_net"))
	link(t, sys, "block/vda/device", filepath.Join(dev, "0000:00:03.0/virtio1"))
	link(t, sys, "block/nvme0n1/device", filepath.Join(dev, "0000:00:04.0/nvme/nvme0"))
	link(t, sys, "block/sda/device", filepath.Join(dev, "0000:00:05.0/ata1/host0/target0/0:0:0:0"))
	write(t, proc, "cpuinfo", "processor\t: 0\nmodel name\t: QEMU Virtual CPU version 2.5+\n\nprocessor\t: 1\nmodel name\t: QEMU Virtual CPU version 2.5+\n")
	write(t, proc, "meminfo", "MemTotal:        2097152 kB\nMemFree:  1 kB\n")
	got := Collect(Paths{Sys: sys, Proc: proc})
	want := discovery.Report{
		NICs:        []discovery.NIC{{MAC: "52:54:00:aa:00:01", Link: "up", Driver: "virtio_net"}},
		DMI:         discovery.DMI{Vendor: "QEMU", Product: "Standard PC (Q35 + ICH9, 2009)", Serial: "DISCO-1", UUID: "1e0a7c4e-3d2b-4c8a-9f00-123456789abc"},
		CPU:         discovery.CPU{Model: "QEMU Virtual CPU version 2.5+", Threads: 2},
		MemoryBytes: 2 << 30,
		Disks: []discovery.Disk{
			{Name: "nvme0n1", SizeBytes: 4 << 30, Model: "QEMU NVMe Ctrl", Serial: "NVME-1", WWN: "eui.0001", Transport: "nvme"},
			{Name: "sda", SizeBytes: 1 << 20, Model: "QEMU HARDDISK", Serial: "SATA-1", Transport: "sata"},
			{Name: "vda", SizeBytes: 8 << 30, Serial: "VIRT-A", Rotational: true, Transport: "virtio"},
		},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Collect (-want +got):\n%s", d)
	}
	if _, err := discovery.Decode(strings.NewReader(mustJSON(t, got))); err != nil {
		t.Errorf("the window would refuse the collected report: %v", err)
	}
}
