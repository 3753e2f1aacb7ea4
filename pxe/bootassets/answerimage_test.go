package bootassets

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The answer image is a filesystem labelled PROXMOX-AIS holding
// answer.toml, as the installer's partition mode finds and reads it: our
// reader, blkid (what udev's /dev/disk/by-label is made of) and xorriso
// all see the label and the answer, for answers of one sector, exactly
// one and more than one.
func TestAnswerImage(t *testing.T) {
	for name, answer := range map[string][]byte{
		"a short answer":         []byte("[global]\nkeyboard = \"en-us\"\nroot-password-hashed = \"$6$x\"\n"),
		"an answer of a sector":  bytes.Repeat([]byte("#"), isoSector),
		"an answer of 3 sectors": bytes.Repeat([]byte("# a comment line\n"), 300),
	} {
		t.Run(name, func(t *testing.T) {
			img, err := AnswerImage(answer, time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC))
			if err != nil {
				t.Fatal(err)
			}
			if len(img)%isoSector != 0 || len(img) > 24*isoSector {
				t.Errorf("image of %d bytes; want a few whole sectors", len(img))
			}
			path := filepath.Join(t.TempDir(), "answer.img")
			if err := os.WriteFile(path, img, 0o600); err != nil {
				t.Fatal(err)
			}
			im := openTestISO(t, path)
			if im.volumeID != AnswerImageLabel {
				t.Errorf("label %q; want %q", im.volumeID, AnswerImageLabel)
			}
			if got := readISOPath(t, path, "/answer.toml"); !bytes.Equal(got, answer) {
				t.Errorf("answer.toml = %q; want %q", got, answer)
			}

			if blkid, err := exec.LookPath("blkid"); err == nil {
				out, err := exec.Command(blkid, "-p", "-o", "export", path).CombinedOutput()
				if err != nil {
					t.Fatalf("blkid: %v\n%s", err, out)
				}
				got := map[string]string{}
				for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
					k, v, _ := strings.Cut(line, "=")
					if k == "LABEL" || k == "TYPE" || k == "USAGE" {
						got[k] = v
					}
				}
				want := map[string]string{"LABEL": "PROXMOX-AIS", "TYPE": "iso9660", "USAGE": "filesystem"}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("blkid (-want +got):\n%s", d)
				}
			}
			x := needTool(t, "xorriso", "xorriso")
			out := filepath.Join(t.TempDir(), "answer.toml")
			msg, err := exec.Command(x, "-abort_on", "FAILURE", "-indev", path, "-osirrox", "on", "-extract", "/ANSWER.TOML", out).CombinedOutput()
			if err != nil {
				t.Fatalf("xorriso: %v\n%s", err, msg)
			}
			if got, _ := os.ReadFile(out); !bytes.Equal(got, answer) {
				t.Errorf("xorriso extracts %q; want %q", got, answer)
			}
			if !strings.Contains(string(msg), "'PROXMOX-AIS'") {
				t.Errorf("xorriso does not name the volume PROXMOX-AIS:\n%s", msg)
			}
		})
	}
}

func TestAnswerImageRefuses(t *testing.T) {
	for name, answer := range map[string][]byte{
		"no answer":     nil,
		"a huge answer": make([]byte, maxComposedFile+1),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := AnswerImage(answer, time.Now()); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

// The partition-mode ISO is the release ISO with a mode file of mode
// partition and label proxmox-ais, and no answer; an 8.2 ISO is refused.
func TestComposePartitionISO(t *testing.T) {
	files := proxmoxLayout(t, testInitrd(t, "gzip", testInit(t)))
	files["auto-installer-mode.toml"] = renderModeFile("9.2", "https://10.0.0.2:8090/answer", "", "")
	iso := buildISO(t, files, isoOpts{})
	base, err := os.ReadFile(iso)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		version  string
		wantMode string
		wantErr  error
	}{
		"9.2 reads its answer from the labelled filesystem": {version: "9.2", wantMode: "mode = \"partition\"\npartition_label = \"proxmox-ais\"\n\n[http]\n"},
		"8.3 too":                        {version: "8.3", wantMode: "mode = \"partition\"\npartition_label = \"proxmox-ais\"\n\n[http]\n"},
		"8.2 is refused":                 {version: "8.2", wantErr: ErrNoPartitionMode},
		"8.2 with a patch is refused":    {version: "8.2.6", wantErr: ErrNoPartitionMode},
		"9.2 with a patch":               {version: "9.2.1", wantMode: "mode = \"partition\"\npartition_label = \"proxmox-ais\"\n\n[http]\n"},
		"an unknown version is accepted": {version: "", wantMode: "mode = \"partition\"\npartition_label = \"proxmox-ais\"\n\n[http]\n"},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := ComposePartitionISO(bytes.NewReader(base), int64(len(base)), tc.version, time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v; want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			out := writeComposed(t, c)
			if got := string(readISOPath(t, out, isoModeFile)); got != tc.wantMode {
				t.Errorf("mode file = %q; want %q", got, tc.wantMode)
			}
			if _, err := openTestISO(t, out).readFile(isoAnswerFile, 1<<20); err == nil {
				t.Error("the partition-mode ISO holds an answer")
			}
			if !bytes.Equal(readISOPath(t, out, "/.cd-info"), files[".cd-info"]) {
				t.Error("a base file changed")
			}
		})
	}
}
