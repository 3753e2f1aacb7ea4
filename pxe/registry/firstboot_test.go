package registry

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/answer"
)

var update = flag.Bool("update", false, "rewrite golden files")

// needTool returns the path of a tool the test needs, skipping the test
// when it is missing (failing under PLASMA_E2E=1).
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("PLASMA_E2E") == "1" {
			t.Fatalf("%s is needed: %v", name, err)
		}
		t.Skipf("%s not found: %v", name, err)
	}
	return p
}

// golden compares got with testdata/firstboot/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "firstboot", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-golden +got):\n%s", path, diff)
	}
}

func testNode(t testing.TB, pools ...string) Registration {
	t.Helper()
	r := Registration{Name: "tappaas3", BootDisk: answer.BootDisk{Kind: answer.BootDiskSerial, Value: "25414A800205"}}
	for _, p := range pools {
		r.Pools = append(r.Pools, mustPool(t, p))
	}
	return r
}

func TestFirstBootScriptGolden(t *testing.T) {
	script, err := FirstBootScript(testNode(t, "tankb1=mirror:S4EWNX0N123456,WD-WCC4E1234567", "tanka1=single:sdd"), "https://10.77.0.2:8443/first-boot-report/TOKEN", "sha256//Ym9ndXMga2V5IHBpbiBmb3IgdGhlIHRlc3QgICAgICA=")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "tappaas3.sh", script)
	if !bytes.HasPrefix(script, []byte("#!/bin/sh\n")) {
		t.Errorf("the script does not start with #!/bin/sh")
	}
}

func TestFirstBootScriptParses(t *testing.T) {
	tests := map[string]Registration{
		"a node without pools":                  testNode(t),
		"a node with every layout":              testNode(t, "p1=single:sdb", "p2=stripe:sdc,sdd", "p3=mirror:S1,S2", "p4=raidz:S3,S4", "p5=raidz2:S5,S6,S7"),
		"a node whose name needs no quoting":    {Name: "zz-test_1"},
		"a node with serials full of dots/dash": testNode(t, "tank=mirror:A.B-C_D,E.F-G_H"),
	}
	shells := []string{"sh", "dash", "bash", "busybox"}
	found := 0
	for _, sh := range shells {
		if _, err := exec.LookPath(sh); err == nil {
			found++
		}
	}
	if found == 0 {
		needTool(t, "sh")
	}
	for name, r := range tests {
		t.Run(name, func(t *testing.T) {
			script, err := FirstBootScript(r, "", "")
			if err != nil {
				t.Fatal(err)
			}
			f := filepath.Join(t.TempDir(), "first-boot")
			if err := os.WriteFile(f, script, 0o700); err != nil {
				t.Fatal(err)
			}
			for _, sh := range shells {
				args := []string{"-n", f}
				if sh == "busybox" {
					args = append([]string{"sh"}, args...)
				}
				if _, err := exec.LookPath(sh); err != nil {
					continue
				}
				if out, err := exec.Command(sh, args...).CombinedOutput(); err != nil {
					t.Errorf("%s -n: %v\n%s", sh, err, out)
				}
			}
		})
	}
}

func TestFirstBootScriptRefusesAnInvalidRegistration(t *testing.T) {
	r := testNode(t)
	r.Pools = []DataPool{{Name: "tank'; rm -rf /", Layout: LayoutSingle, Disks: []string{"sdb"}}}
	if _, err := FirstBootScript(r, "", ""); !errors.Is(err, ErrInvalidPool) {
		t.Errorf("FirstBootScript = %v, want ErrInvalidPool", err)
	}
}

func TestShQuote(t *testing.T) {
	tests := map[string]struct{ in, want string }{
		"a plain word":        {"tank", "'tank'"},
		"an empty string":     {"", "''"},
		"a single quote":      {"it's", `'it'\''s'`},
		"dollars and spaces":  {"$HOME `x` a b", "'$HOME `x` a b'"},
		"only a single quote": {"'", `''\'''`},
	}
	sh := ""
	if p, err := exec.LookPath("sh"); err == nil {
		sh = p
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := shQuote(tc.in); got != tc.want {
				t.Errorf("shQuote(%q) = %s, want %s", tc.in, got, tc.want)
			}
			if sh == "" {
				return
			}
			out, err := exec.Command(sh, "-c", "printf '%s' "+shQuote(tc.in)).Output()
			if err != nil || string(out) != tc.in {
				t.Errorf("sh read %s as %q (%v), want %q", shQuote(tc.in), out, err, tc.in)
			}
		})
	}
}

// stubs record their argv, one call a line, each argument in brackets.
const stubRecord = `#!/bin/sh
{ printf '%s' "${0##*/}"; for a in "$@"; do printf ' [%s]' "$a"; done; printf '\n'; } >>"$STUB_LOG"
`

var stubs = map[string]string{
	"zpool": stubRecord + `case $1 in
list)
	for p in ${ZPOOL_EXISTING:-}; do
		if [ "$p" = "$5" ]; then echo "$p"; exit 0; fi
	done
	echo "cannot open '$5': no such pool" >&2
	exit 1 ;;
create) exit "${ZPOOL_CREATE_RC:-0}" ;;
import)
	for a in "$@"; do last=$a; done
	for p in ${ZPOOL_IMPORTABLE:-}; do
		if [ "$p" = "$last" ]; then exit 0; fi
	done
	echo "cannot import '$last': no such pool available" >&2
	exit 1 ;;
esac
exit 2
`,
	"lsblk": stubRecord + `for d in ${LSBLK_IN_USE:-}; do
	if [ "$d" = "$4" ]; then echo 'FSTYPE="LVM2_member" MOUNTPOINT=""'; exit 0; fi
done
for d in ${LSBLK_ZFS:-}; do
	if [ "$d" = "$4" ]; then echo 'FSTYPE="" MOUNTPOINT=""'; echo 'FSTYPE="zfs_member" MOUNTPOINT=""'; exit 0; fi
done
echo 'FSTYPE="" MOUNTPOINT=""'
`,
	"efibootmgr": stubRecord + `if [ $# -eq 0 ]; then cat "$EFIBOOTMGR_OUTPUT"; fi
`,
}

const efiNetworkFirst = `BootCurrent: 0004
Timeout: 1 seconds
BootOrder: 0001,0002,0004,0003
Boot0001* UEFI PXEv4 (MAC:3CECEF123456)	PciRoot(0x0)/Pci(0x1c,0x0)/Pci(0x0,0x0)/MAC(3cecef123456,1)/IPv4(0.0.0.0,0,DHCP,0.0.0.0,0.0.0.0,0.0.0.0)
Boot0002* UEFI HTTPv6 (MAC:3CECEF123456)	PciRoot(0x0)/Pci(0x1c,0x0)/Pci(0x0,0x0)/MAC(3cecef123456,1)/IPv6([::]:<->[::]:,0,0)/Uri()
Boot0003* UEFI: Built-in EFI Shell	VenMedia(5023b95c-db26-429b-a648-bd47664c8012)..BO
Boot0004* proxmox	HD(2,GPT,2d6f0a1e-4b1c-4a7e-9a31-6c1f0b0e8c11,0x800,0x200000)/File(\EFI\proxmox\shimx64.efi)
`

const efiDiskFirst = `BootCurrent: 0004
BootOrder: 0004,0001
Boot0001* Network Card
Boot0004* Linux Boot Manager
`

// fakeMachine lays out /dev, /dev/disk/by-id and the stubs under root.
type fakeMachine struct {
	root string
	env  []string
}

func newFakeMachine(t *testing.T, uefi bool, efiOutput string, extraLinks map[string]string) *fakeMachine {
	t.Helper()
	root := t.TempDir()
	dev := filepath.Join(root, "dev")
	byID := filepath.Join(dev, "disk", "by-id")
	bin := filepath.Join(root, "bin")
	for _, d := range []string{byID, bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"sda", "sda1", "sda3", "sdb", "sdc", "sdd", "nvme1n1", "nvme1n1p1"} {
		if err := os.WriteFile(filepath.Join(dev, d), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"nvme-Samsung_SSD_970_EVO_1TB_S4EWNX0N123456":       "nvme1n1",
		"nvme-Samsung_SSD_970_EVO_1TB_S4EWNX0N123456_1":     "nvme1n1",
		"nvme-Samsung_SSD_970_EVO_1TB_S4EWNX0N123456-part1": "nvme1n1p1",
		"nvme-eui.0025385b71b07e2f":                         "nvme1n1",
		"ata-WDC_WD40EFRX-68N32N0_WD-WCC4E1234567":          "sdb",
		"wwn-0x50014ee2b5b5b5b5":                            "sdb",
		"ata-WDC_WD40EFRX-68N32N0_WD-WCC4E7654321":          "sdc",
		"ata-Samsung_SSD_860_EVO_250GB_25414A800205":        "sda",
		"ata-Samsung_SSD_860_EVO_250GB_25414A800205-part3":  "sda3",
		"ata-WDC_WD40EFRX-68N32N0_WD-WCC4E1234567X":         "sdd", // a longer serial, not a match
	}
	for k, v := range extraLinks {
		links[k] = v
	}
	for name, target := range links {
		if err := os.Symlink(filepath.Join("..", "..", target), filepath.Join(byID, name)); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range stubs {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	efiDir := filepath.Join(root, "sys", "firmware", "efi")
	if uefi {
		if err := os.MkdirAll(efiDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	efiOut := filepath.Join(root, "efibootmgr.out")
	if err := os.WriteFile(efiOut, []byte(efiOutput), 0o644); err != nil {
		t.Fatal(err)
	}
	return &fakeMachine{root: root, env: []string{
		"PATH=" + bin + ":/usr/bin:/bin",
		"DISK_BY_ID=" + byID,
		"DEV_DIR=" + dev,
		"EFI_DIR=" + efiDir,
		"STUB_LOG=" + filepath.Join(root, "calls"),
		"EFIBOOTMGR_OUTPUT=" + efiOut,
	}}
}

// run runs the script with shell, returning the recorded calls, the
// output and the exit code, with the fake root written as $ROOT.
func (m *fakeMachine) run(t *testing.T, shell string, script []byte, env ...string) (calls, out string, code int) {
	t.Helper()
	f := filepath.Join(m.root, "proxmox-first-boot")
	if err := os.WriteFile(f, script, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(m.root, "calls"))
	cmd := exec.Command(shell, f, "fully-up")
	cmd.Env = append(append([]string{}, m.env...), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatal(err)
	}
	rec, err := os.ReadFile(filepath.Join(m.root, "calls"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	unroot := func(s string) string { return strings.ReplaceAll(s, m.root, "$ROOT") }
	return unroot(string(rec)), unroot(stdout.String() + "--- stderr\n" + stderr.String()), code
}

func TestFirstBootScriptRuns(t *testing.T) {
	sh := needTool(t, "sh")
	for _, tool := range []string{"awk", "sed", "grep", "readlink"} {
		needTool(t, tool)
	}
	const (
		mirror = "tankb1=mirror:S4EWNX0N123456,WD-WCC4E1234567"
		single = "tanka1=single:sdd"
	)
	tests := map[string]struct {
		pools     []string
		wipe      bool
		uefi      bool
		efi       string
		links     map[string]string
		env       []string
		wantCode  int
		wantInOut []string
	}{
		"creates-pools-and-fixes-the-boot-order": {
			pools: []string{mirror, single, "tankc1=raidz2:S1,S2,S3"}, uefi: true, efi: efiNetworkFirst,
			env:       []string{"ZPOOL_EXISTING=tankc1"},
			wantInOut: []string{"pool tankb1 created: mirror $ROOT/dev/disk/by-id/nvme-Samsung_SSD_970_EVO_1TB_S4EWNX0N123456", "pool tankc1 exists; left alone", "boot order changed from 0001,0002,0004,0003 to 0004,0003,0001,0002"},
		},
		"a-missing-disk-creates-nothing-and-fails": {
			pools: []string{single, "tankb1=mirror:S4EWNX0N123456,S9MISSING0001"}, uefi: true, efi: efiNetworkFirst, wantCode: 1,
			wantInOut: []string{"pool tankb1: disk with serial S9MISSING0001 not found under $ROOT/dev/disk/by-id", "no pool created"},
		},
		"a-missing-kernel-disk-fails": {
			pools: []string{"tanka1=single:sde"}, wantCode: 1,
			wantInOut: []string{"pool tanka1: disk sde not found ($ROOT/dev/sde does not exist)"},
		},
		"existing-pools-are-left-alone": {
			pools: []string{mirror, single}, uefi: true, efi: efiDiskFirst, env: []string{"ZPOOL_EXISTING=tanka1 tankb1"},
			wantInOut: []string{"pool tankb1 exists; left alone", "pool tanka1 exists; left alone", "boot order 0004,0001 already puts the installed system ahead of network boot"},
		},
		"bios-changes-no-boot-order": {
			wantInOut: []string{"no data pools declared", "legacy BIOS boot"},
		},
		"a-disk-in-use-is-refused": {
			pools: []string{single}, env: []string{"LSBLK_IN_USE=$ROOT/dev/sdd"}, wantCode: 1,
			wantInOut: []string{"pool tanka1: disk sdd ($ROOT/dev/sdd) holds a mounted filesystem, swap or LVM; not using it"},
		},
		"a-serial-of-two-disks-is-refused": {
			pools: []string{"tanka1=single:DUP123"}, links: map[string]string{"ata-Foo_DUP123": "sdb", "usb-Bar_DUP123": "sdc"}, wantCode: 1,
			wantInOut: []string{"pool tanka1: serial DUP123 matches two disks"},
		},
		"a-failing-zpool-create-fails-the-script": {
			pools: []string{single}, env: []string{"ZPOOL_CREATE_RC=1"}, wantCode: 1,
			wantInOut: []string{"pool tanka1: zpool create failed"},
		},
		"a-pool-on-the-disks-is-imported-not-created": {
			pools: []string{mirror, single}, env: []string{"ZPOOL_IMPORTABLE=tankb1", "LSBLK_ZFS=$ROOT/dev/disk/by-id/nvme-Samsung_SSD_970_EVO_1TB_S4EWNX0N123456 $ROOT/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC4E1234567"},
			wantInOut: []string{"pool tankb1 found on its disks and imported; its data is kept", "pool tanka1 created: $ROOT/dev/sdd"},
		},
		"a-foreign-pool-on-the-disks-creates-nothing-and-fails": {
			pools: []string{single, mirror}, env: []string{"LSBLK_ZFS=$ROOT/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC4E1234567"}, wantCode: 1,
			wantInOut: []string{"pool tankb1: disk WD-WCC4E1234567 ($ROOT/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC4E1234567) holds a ZFS pool that is not an importable tankb1; not creating over it (reinstall wiping the data pools recreates it)", "no pool created"},
		},
		"wipe-data-creates-over-an-existing-pool": {
			pools: []string{mirror}, wipe: true, env: []string{"ZPOOL_IMPORTABLE=tankb1", "LSBLK_ZFS=$ROOT/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC4E1234567"},
			wantInOut: []string{"wiping data: pools are created anew over what their disks hold", "pool tankb1 created: mirror"},
		},
		"uefi-without-a-boot-order-changes-nothing": {
			uefi: true, efi: "BootCurrent: 0001\n",
			wantInOut: []string{"efibootmgr shows no boot order; nothing changed"},
		},
	}
	shells := map[string]string{"sh": sh}
	if p, err := exec.LookPath("bash"); err == nil {
		shells["bash"] = p
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := testNode(t, tc.pools...)
			r.WipeData = tc.wipe
			script, err := FirstBootScript(r, "", "")
			if err != nil {
				t.Fatal(err)
			}
			m := newFakeMachine(t, tc.uefi, tc.efi, tc.links)
			env := make([]string, len(tc.env))
			for i, e := range tc.env {
				env[i] = strings.ReplaceAll(e, "$ROOT", m.root)
			}
			var first string
			for _, shName := range []string{"sh", "bash"} {
				shell, ok := shells[shName]
				if !ok {
					continue
				}
				calls, out, code := m.run(t, shell, script, env...)
				if code != tc.wantCode {
					t.Errorf("%s: exit code %d, want %d\n%s", shName, code, tc.wantCode, out)
				}
				for _, s := range tc.wantInOut {
					if !strings.Contains(out, s) {
						t.Errorf("%s: output lacks %q:\n%s", shName, s, out)
					}
				}
				got := "# calls\n" + calls + "# output\n" + out
				if first == "" {
					first = got
					golden(t, name+".txt", []byte(got))
				} else if diff := cmp.Diff(first, got); diff != "" {
					t.Errorf("%s behaves unlike sh (-sh +%s):\n%s", shName, shName, diff)
				}
			}
		})
	}
}

// TestFirstBootScriptSecondRun: after a first run created the pools, a
// second run (the stub now says they exist) creates nothing.
func TestFirstBootScriptSecondRun(t *testing.T) {
	sh := needTool(t, "sh")
	script, err := FirstBootScript(testNode(t, "tankb1=mirror:S4EWNX0N123456,WD-WCC4E1234567"), "", "")
	if err != nil {
		t.Fatal(err)
	}
	m := newFakeMachine(t, false, "", nil)
	calls, out, code := m.run(t, sh, script)
	if code != 0 || !strings.Contains(calls, "zpool [create]") {
		t.Fatalf("first run: code %d, calls:\n%s\n%s", code, calls, out)
	}
	calls, out, code = m.run(t, sh, script, "ZPOOL_EXISTING=tankb1")
	if code != 0 || strings.Contains(calls, "create") {
		t.Errorf("second run: code %d, calls:\n%s\n%s", code, calls, out)
	}
	if want := "zpool [list] [-H] [-o] [name] [tankb1]\n"; calls != want {
		t.Errorf("second run calls = %q, want %q", calls, want)
	}
}
