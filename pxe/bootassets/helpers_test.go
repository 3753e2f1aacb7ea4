package bootassets

import (
	"bytes"
	"compress/gzip"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The golden files of this package refresh with -update. The flag is
// registered only once, whichever test file of the package asks first.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
}

func updateGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// needTool returns the path of a command a test needs. It skips the test
// when the command is missing, or fails it under PLASMA_E2E=1.
func needTool(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("PLASMA_E2E") == "1" {
			t.Fatalf("%s not found (Debian package %s); PLASMA_E2E=1 needs it", name, pkg)
		}
		t.Skipf("%s not found (Debian package %s)", name, pkg)
	}
	return p
}

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if updateGolden() {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update to accept):\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

// prepTestKernel is the stand-in kernel of the test ISOs.
var prepTestKernel = []byte("not a kernel, but 37 bytes of one\x00\x01\x02\x03")

// testCDInfo is the .cd-info of the test ISOs.
const testCDInfo = "ISONAME='proxmox-ve'\nPRODUCT='pve'\nPRODUCTLONG='Proxmox VE'\nRELEASE='9.2'\nISORELEASE='1'\nISODIST='trixie'\n"

func testInit(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "init"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newcArchive returns a newc archive of files (name to content; a name
// ending in "/" is a folder), written in name order.
func newcArchive(t testing.TB, files map[string][]byte) []byte {
	t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	w := &newcWriter{w: &b}
	for _, n := range names {
		if strings.HasSuffix(n, "/") {
			if err := w.header(newcEntry{Name: strings.TrimSuffix(n, "/"), Mode: 0o40755}, 2); err != nil {
				t.Fatal(err)
			}
			continue
		}
		mode := uint32(0o100644)
		if n == "init" {
			mode = 0o100755
		}
		if err := w.file(newcEntry{Name: n, Mode: mode, Size: int64(len(files[n]))}, bytes.NewReader(files[n])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// compress returns data compressed as kind: "" (none), "gzip" or "zstd".
func compress(t testing.TB, kind string, data []byte) []byte {
	t.Helper()
	switch kind {
	case "":
		return data
	case "gzip":
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(data)
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	case "zstd":
		z := needTool(t, "zstd", "zstd")
		cmd := exec.Command(z, "-q", "-c")
		cmd.Stdin = bytes.NewReader(data)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	t.Fatalf("unknown compression %q", kind)
	return nil
}

// testInitrd returns an initrd holding init, a .cd-info and a folder,
// compressed as kind.
func testInitrd(t testing.TB, kind string, init []byte) []byte {
	t.Helper()
	files := map[string][]byte{"etc/": nil, "etc/hostid": []byte("abcd"), ".cd-info": []byte(testCDInfo)}
	if init != nil {
		files["init"] = init
	}
	return compress(t, kind, newcArchive(t, files))
}

// proxmoxLayout returns the files of a test ISO in the Proxmox layout.
func proxmoxLayout(t testing.TB, initrd []byte) map[string][]byte {
	t.Helper()
	return map[string][]byte{
		"boot/linux26":           prepTestKernel,
		"boot/initrd.img":        initrd,
		"boot/grub/eltorito.img": make([]byte, 2048),
		"auto-installer-capable": nil,
		".cd-info":               []byte(testCDInfo),
		".pve-cd-id.txt":         []byte("d34db33f-0000-4000-8000-000000000000\n"),
		"pve-base.squashfs":      []byte("squashfs stand-in"),
		"pve-installer.squashfs": []byte("squashfs stand-in"),
	}
}

// isoOpts says how buildISO writes the image.
type isoOpts struct {
	// noRockRidge and noJoliet leave the extensions out.
	noRockRidge, noJoliet bool
	// noBoot leaves the El Torito boot record out.
	noBoot bool
	// name is the file name; "test.iso" when empty.
	name string
}

// buildISO writes files into an ISO with xorriso and returns its path.
func buildISO(t testing.TB, files map[string][]byte, o isoOpts) string {
	t.Helper()
	x := needTool(t, "xorriso", "xorriso")
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if o.name == "" {
		o.name = "test.iso"
	}
	out := filepath.Join(dir, o.name)
	args := []string{"-as", "mkisofs", "-quiet", "-o", out, "-V", "PVE"}
	if o.noRockRidge {
		args = append(args, "--norock") // xorriso writes Rock Ridge unless told not to
	} else {
		args = append(args, "-R")
	}
	if !o.noJoliet {
		args = append(args, "-J")
	}
	if _, ok := files["boot/grub/eltorito.img"]; ok && !o.noBoot {
		args = append(args, "-b", "boot/grub/eltorito.img", "-no-emul-boot", "-boot-load-size", "4")
	}
	// ISOLINUX's layout: its boot image carries a boot info table
	// (the primary volume descriptor's and its own LBA), written by
	// xorriso into the image's copy.
	if _, ok := files["isolinux/isolinux.bin"]; ok && !o.noBoot {
		args = append(args, "-b", "isolinux/isolinux.bin", "-c", "isolinux/boot.cat", "-no-emul-boot", "-boot-load-size", "4", "-boot-info-table")
	}
	args = append(args, root)
	if out, err := exec.Command(x, args...).CombinedOutput(); err != nil {
		t.Fatalf("xorriso %v: %v\n%s", args, err, out)
	}
	return out
}

// testISO returns the path of a Proxmox-layout test ISO with a gzip initrd
// whose init carries the anchor: built with xorriso when it is installed,
// else unpacked from testdata/pve-tiny.iso.gz (refreshed by
// TestGoldenISO -update).
func testISO(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("xorriso"); err == nil {
		return buildISO(t, proxmoxLayout(t, testInitrd(t, "gzip", testInit(t))), isoOpts{name: "proxmox-ve_9.2-1.iso"})
	}
	if os.Getenv("PLASMA_E2E") == "1" {
		t.Fatal("xorriso not found (Debian package xorriso); PLASMA_E2E=1 needs it")
	}
	p := filepath.Join(t.TempDir(), "proxmox-ve_9.2-1.iso")
	if err := unpackGoldenISO(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// unpackGoldenISO writes testdata/pve-tiny.iso.gz, decompressed,
// to path.
func unpackGoldenISO(path string) error {
	f, err := os.Open(filepath.Join("testdata", "pve-tiny.iso.gz"))
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if _, err := b.ReadFrom(zr); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

func TestGoldenISO(t *testing.T) {
	iso := buildISO(t, proxmoxLayout(t, testInitrd(t, "gzip", testInit(t))), isoOpts{name: "proxmox-ve_9.2-1.iso"})
	raw, err := os.ReadFile(iso)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "pve-tiny.iso.gz")
	if updateGolden() {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		zw.Write(raw)
		zw.Close()
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The golden ISO must hold what a freshly built one holds.
	got := filepath.Join(t.TempDir(), "golden.iso")
	if err := unpackGoldenISO(got); err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	for _, p := range []string{isoKernel, isoInitrd, isoCDInfo, isoCapableFlag} {
		a, b := readISOPath(t, iso, p), readISOPath(t, got, p)
		if !bytes.Equal(a, b) {
			t.Errorf("%s of the golden ISO differs from a fresh build (run with -update)", p)
		}
	}
}

// openTestISO opens the ISO at iso with the package's reader, for the
// length of t.
func openTestISO(t testing.TB, iso string) *isoImage {
	t.Helper()
	f, err := os.Open(iso)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, _ := f.Stat()
	im, err := openISO(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return im
}

// readISOPath reads the file at p in the ISO at iso with the package's
// reader.
func readISOPath(t testing.TB, iso, p string) []byte {
	t.Helper()
	im := openTestISO(t, iso)
	b, err := im.readFile(p, 1<<30)
	if err != nil {
		t.Fatalf("read %s from %s: %v", p, filepath.Base(iso), err)
	}
	return b
}
