package bootassets

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// composeTestISO composes the answer ISO over the test ISO at iso and
// writes it beside, for the tools to read.
func composeTestISO(t *testing.T, iso string, answer []byte) (*ComposedISO, []byte, string) {
	t.Helper()
	base, err := os.ReadFile(iso)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ComposeAnswerISO(bytes.NewReader(base), int64(len(base)), "9.2", answer, time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	return c, base, writeComposed(t, c)
}

// writeComposed writes the composed image c to a file, for the tools to
// read, and returns its path.
func writeComposed(t *testing.T, c *ComposedISO) string {
	t.Helper()
	img, err := io.ReadAll(io.NewSectionReader(c, 0, c.Size()))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "composed.iso")
	if err := os.WriteFile(out, img, 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// The composed image holds /answer.toml and an iso-mode mode file, read
// by the package's reader and by xorriso, in the Rock Ridge, plain ISO
// 9660 and Joliet trees; every base file reads back unchanged; and the
// image is the base's bytes but for the volume descriptors, with a tail
// of a few sectors.
func TestComposeAnswerISO(t *testing.T) {
	answer := []byte("[global]\nkeyboard = \"en-us\"\nroot-password-hashed = \"$6$x\"\n")
	files := proxmoxLayout(t, testInitrd(t, "gzip", testInit(t)))
	files["auto-installer-mode.toml"] = renderModeFile("9.2", "https://10.0.0.2:8090/answer", "", "")
	files["dir/b.txt"] = []byte("in a folder\n")
	wantMode := "mode = \"iso\"\npartition_label = \"proxmox-ais\"\n\n[http]\n"
	for name, o := range map[string]isoOpts{
		"rock ridge and joliet": {},
		"plain ISO 9660":        {noRockRidge: true, noJoliet: true},
		"no boot record":        {noBoot: true},
	} {
		t.Run(name, func(t *testing.T) {
			iso := buildISO(t, files, o)
			c, base, out := composeTestISO(t, iso, answer)
			if got := readISOPath(t, out, isoAnswerFile); !bytes.Equal(got, answer) {
				t.Errorf("answer.toml = %q", got)
			}
			if got := string(readISOPath(t, out, isoModeFile)); got != wantMode {
				t.Errorf("mode file = %q; want %q", got, wantMode)
			}
			baseImage, composed := openTestISO(t, iso), openTestISO(t, out)
			for p := range files {
				if p == "auto-installer-mode.toml" {
					continue
				}
				want, err := baseImage.readFile("/"+p, 1<<30)
				if err != nil {
					continue // a name plain ISO 9660 cannot hold
				}
				if got, err := composed.readFile("/"+p, 1<<30); err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s differs from the base's: %v", p, err)
				}
			}
			if composed.joliet != nil {
				if _, err := composed.lookupIn(composed.joliet, isoAnswerFile, true); err != nil {
					t.Errorf("the Joliet tree lacks the answer: %v", err)
				}
			}
			// Outside the descriptors, the base's bytes are the image's.
			img, _ := os.ReadFile(out)
			head := 16 * isoSector
			end := head + len(c.head)
			if !bytes.Equal(img[:head], base[:head]) || !bytes.Equal(img[end:len(base)], base[end:]) {
				t.Error("the composed image changed the base's bytes outside the volume descriptors")
			}
			if tail := c.Size() - int64(len(base)); tail > 16*isoSector {
				t.Errorf("tail of %d bytes; want a few sectors", tail)
			}
			if !bytes.Contains(img[len(base):], answer) {
				t.Error("the tail does not hold the answer")
			}
			x, err := exec.LookPath("xorriso")
			if err != nil || o.noRockRidge {
				return // xorriso shows plain ISO 9660 names as written: upper case
			}
			dir := t.TempDir()
			cmd := exec.Command(x, "-abort_on", "FAILURE", "-indev", out, "-osirrox", "on",
				"-extract", "/answer.toml", filepath.Join(dir, "answer.toml"),
				"-extract", "/auto-installer-mode.toml", filepath.Join(dir, "mode.toml"),
				"-extract", "/dir/b.txt", filepath.Join(dir, "b.txt"))
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("xorriso: %v\n%s", err, msg)
			}
			for f, want := range map[string]string{"answer.toml": string(answer), "mode.toml": wantMode, "b.txt": "in a folder\n"} {
				if got, _ := os.ReadFile(filepath.Join(dir, f)); string(got) != want {
					t.Errorf("xorriso extracts %s = %q; want %q", f, got, want)
				}
			}
			if o.noBoot {
				return
			}
			report, err := exec.Command(x, "-indev", out, "-report_el_torito", "plain").CombinedOutput()
			if err != nil || !strings.Contains(string(report), "El Torito boot img") {
				t.Errorf("the El Torito boot record is lost: %v\n%s", err, report)
			}
		})
	}
}

// The image reads the same in any piece size, and io.EOF ends it.
func TestComposedISOReadsInPieces(t *testing.T) {
	iso := buildISO(t, proxmoxLayout(t, testInitrd(t, "gzip", testInit(t))), isoOpts{})
	c, _, out := composeTestISO(t, iso, []byte("answer"))
	whole, _ := os.ReadFile(out)
	for _, piece := range []int{1, 511, 2048, 4099, 1 << 16} {
		var got []byte
		buf := make([]byte, piece)
		for off := int64(0); ; {
			n, err := c.ReadAt(buf, off)
			got = append(got, buf[:n]...)
			off += int64(n)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got, whole) {
			t.Errorf("read in pieces of %d: differs", piece)
		}
	}
	if n, err := c.ReadAt(make([]byte, 10), c.Size()); n != 0 || err != io.EOF {
		t.Errorf("read at the end: %d, %v", n, err)
	}
}

// A base that is not ISO 9660 and an added file too large are refused.
func TestComposeISORefuses(t *testing.T) {
	junk := bytes.Repeat([]byte{0xAA}, 40*isoSector)
	if _, err := ComposeAnswerISO(bytes.NewReader(junk), int64(len(junk)), "9.2", []byte("x"), time.Now()); err == nil {
		t.Error("composed over a base that is not ISO 9660")
	}
	iso := buildISO(t, map[string][]byte{"a": []byte("a")}, isoOpts{})
	base, _ := os.ReadFile(iso)
	if _, err := ComposeAnswerISO(bytes.NewReader(base), int64(len(base)), "9.2", make([]byte, maxComposedFile+1), time.Now()); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("an answer over the bound: %v", err)
	}
}

// A composed image boots with ISOLINUX, which finds its files as a BIOS
// boot loader on a real release ISO does: its boot info table (patched
// into its boot image when the base was made) names sector 16, where the
// composed image's primary volume descriptor is, and its own LBA, where
// it still is; the root directory that descriptor names holds the base's
// /isolinux and /boot, whose files read back unchanged, beside the
// answer. The boot image is the base's, byte for byte.
func TestComposedISOKeepsWhatISOLINUXReads(t *testing.T) {
	files := proxmoxLayout(t, testInitrd(t, "gzip", testInit(t)))
	delete(files, "boot/grub/eltorito.img") // GRUB's: ISOLINUX boots this one
	files["isolinux/isolinux.bin"] = bytes.Repeat([]byte{0xfa}, 4*isoSector)
	files["isolinux/isolinux.cfg"] = []byte("DEFAULT linux\nLABEL linux\n  KERNEL /boot/linux26\n")
	iso := buildISO(t, files, isoOpts{})
	_, base, out := composeTestISO(t, iso, []byte("[global]\n"))
	img, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	composed := openTestISO(t, out)
	rec, err := composed.lookup("/isolinux/isolinux.bin")
	if err != nil {
		t.Fatalf("the composed root lacks ISOLINUX: %v", err)
	}
	at := int64(rec.lba) * isoSector
	boot := img[at : at+int64(rec.length)]
	if !bytes.Equal(boot, base[at:at+int64(rec.length)]) {
		t.Error("the boot image moved or changed")
	}
	pvd, file, length := binary.LittleEndian.Uint32(boot[8:]), binary.LittleEndian.Uint32(boot[12:]), binary.LittleEndian.Uint32(boot[16:])
	if pvd != 16 || file != rec.lba || length != uint32(rec.length) {
		t.Fatalf("boot info table: volume descriptor %d, file %d (%d bytes); want 16, %d (%d bytes)", pvd, file, length, rec.lba, rec.length)
	}
	if d := img[pvd*isoSector:]; d[0] != 1 || string(d[1:6]) != "CD001" || bytes.Equal(d[156:190], base[pvd*isoSector+156:pvd*isoSector+190]) {
		t.Error("sector 16 is not the composed primary volume descriptor")
	}
	for _, p := range []string{"isolinux/isolinux.cfg", "boot/linux26", "boot/initrd.img"} {
		if got, err := composed.readFile("/"+p, 1<<30); err != nil || !bytes.Equal(got, files[p]) {
			t.Errorf("%s through the composed root: %v", p, err)
		}
	}
	if got := readISOPath(t, out, isoAnswerFile); string(got) != "[global]\n" {
		t.Errorf("answer.toml = %q", got)
	}
}
