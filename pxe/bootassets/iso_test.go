package bootassets

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestISOReaderFindsNamesOfEachKind(t *testing.T) {
	needTool(t, "xorriso", "xorriso")
	long := strings.Repeat("a-long-rock-ridge-name-", 10) + "end.txt" // > 200 bytes: NM spills into a CE area
	files := map[string][]byte{
		"boot/linux26":       prepTestKernel,
		"boot/initrd.img":    []byte("initrd"),
		".cd-info":           []byte(testCDInfo),
		"MixedCase/File.txt": []byte("mixed"),
		"deep/a/b/c/d/e/f/g": []byte("deep"),
		long:                 []byte("long"),
		"empty":              nil,
	}
	tests := map[string]struct {
		o    isoOpts
		want map[string]string // path to content; "" for must-not-exist
	}{
		"Rock Ridge names are exact": {
			want: map[string]string{"/boot/linux26": string(prepTestKernel), ".cd-info": testCDInfo, "MixedCase/File.txt": "mixed",
				"deep/a/b/c/d/e/f/g": "deep", long: "long", "empty": "", "mixedcase/file.txt": "-", "boot/none": "-"},
		},
		"Joliet names serve when there is no Rock Ridge": {
			o:    isoOpts{noRockRidge: true},
			want: map[string]string{"/boot/linux26": string(prepTestKernel), ".cd-info": testCDInfo, "MixedCase/File.txt": "mixed"},
		},
		"plain ISO 9660 names match without case": {
			o:    isoOpts{noRockRidge: true, noJoliet: true},
			want: map[string]string{"/BOOT/LINUX26": string(prepTestKernel), "boot/initrd.img": "initrd", ".cd-info": "-"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			im := openTestISO(t, buildISO(t, files, tc.o))
			if im.volumeID != "PVE" {
				t.Errorf("volume id %q, want PVE", im.volumeID)
			}
			for p, want := range tc.want {
				got, err := im.readFile(p, 1<<20)
				if want == "-" {
					if !errors.Is(err, fs.ErrNotExist) {
						t.Errorf("%s: err = %v, want not-exist", p, err)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", p, err)
					continue
				}
				if diff := cmp.Diff(want, string(got)); diff != "" {
					t.Errorf("%s (-want +got):\n%s", p, diff)
				}
			}
		})
	}
}

func TestISOReaderRefusesWhatIsNotAnImage(t *testing.T) {
	tests := map[string][]byte{
		"an empty file":           nil,
		"zeros":                   make([]byte, 40*isoSector),
		"a terminator first":      append(make([]byte, 16*isoSector), append([]byte{255, 'C', 'D', '0', '0', '1', 1}, make([]byte, isoSector-7)...)...),
		"text with an ISO suffix": bytes.Repeat([]byte("hello "), 20000),
	}
	for name, data := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := openISO(bytes.NewReader(data), int64(len(data))); !errors.Is(err, errNotISO9660) {
				t.Errorf("err = %v, want errNotISO9660", err)
			}
		})
	}
}

func TestISOReaderRefusesReadingPastMax(t *testing.T) {
	iso := filepath.Join(t.TempDir(), "t.iso")
	if err := unpackGoldenISO(iso); err != nil {
		t.Fatal(err)
	}
	im := openTestISO(t, iso)
	if _, err := im.readFile(isoKernel, 4); err == nil || !strings.Contains(err.Error(), "more than the 4 expected") {
		t.Errorf("err = %v, want a size refusal", err)
	}
	if _, err := im.readFile("/boot", 1<<20); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("reading a directory: err = %v", err)
	}
}

// FuzzOpenISO overwrites bytes of the golden ISO's descriptors and
// directories (the first 40 sectors) with the fuzzer's, at an offset the
// fuzzer picks, so that inputs stay small.
func FuzzOpenISO(f *testing.F) {
	iso := filepath.Join(f.TempDir(), "t.iso")
	if err := unpackGoldenISO(iso); err != nil {
		f.Fatal(err)
	}
	base, err := os.ReadFile(iso)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint32(16*isoSector+156), []byte{34, 0, 20, 0, 0, 0})     // the root record
	f.Add(uint32(16*isoSector+128), []byte{0, 4})                   // the block size
	f.Add(uint32(17*isoSector), []byte{2, 'C', 'D', '0', '0', '1'}) // a second descriptor
	f.Add(uint32(20*isoSector), bytes.Repeat([]byte{0xff}, 300))
	f.Add(uint32(0), []byte{})
	f.Fuzz(func(t *testing.T, off uint32, patch []byte) {
		img := bytes.Clone(base)
		at := 16*isoSector + int(off%(24*isoSector))
		copy(img[at:], patch)
		im, err := openISO(bytes.NewReader(img), int64(len(img)))
		if err != nil {
			return
		}
		for _, p := range []string{isoKernel, isoCDInfo, isoCapableFlag, "/", "boot/grub/eltorito.img"} {
			_, _ = im.readFile(p, 1<<20)
		}
	})
}
