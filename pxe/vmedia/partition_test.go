package vmedia

import (
	"context"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/bootassets"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// partitioned is answering whose node pve3 reads its answer from an
// answer image (the media answer partition).
type partitioned struct{ *answering }

func (partitioned) AnswerOnImage(_ context.Context, node string) (bool, error) {
	return node == "pve3", nil
}

// The media of a partition-mode node: its CD is the release ISO with a
// partition-mode file and no answer, claiming nothing; its answer image,
// at a URL of its own (.img, 0600 record), holds its answer under the
// label PROXMOX-AIS, is claimed once by the first address that GETs it
// (HEAD claims nothing), refused to another (403), and dies with
// Disarm, with the CD. A node whose answer goes on its CD has no answer
// image (404).
func TestMediaOfAPartitionNode(t *testing.T) {
	x, rel, _ := releaseISO(t)
	l := newLab(t, 0)
	b := partitioned{&answering{}}
	l.h.cfg.Media = MediaOf(b, Release{Dir: rel, Version: answer.Version92, BaseURL: "https://192.0.2.1:8090"})
	ctx := t.Context()
	extract := func(img []byte, file string) (string, string) {
		p := filepath.Join(t.TempDir(), "medium")
		os.WriteFile(p, img, 0o600)
		out := filepath.Join(t.TempDir(), "out")
		msg, err := exec.Command(x, "-indev", p, "-osirrox", "on", "-extract", file, out).CombinedOutput()
		got, _ := os.ReadFile(out)
		if err != nil {
			return "", string(msg)
		}
		return string(got), string(msg)
	}

	cdPath := l.armed(t, "pve3")
	cd := l.get(t, "GET", cdPath, "")
	img := body(cd)
	if cd.StatusCode != 200 {
		t.Fatalf("GET the CD: %d %s", cd.StatusCode, img)
	}
	if mode, msg := extract([]byte(img), "/auto-installer-mode.toml"); !strings.HasPrefix(mode, "mode = \"partition\"\npartition_label = \"proxmox-ais\"\n") {
		t.Errorf("the CD's mode file %q\n%s", mode, msg)
	}
	if strings.Contains(img, "pve3.example.org") || b.claims.Load() != 0 {
		t.Errorf("the CD holds the answer or claimed it (%d claims)", b.claims.Load())
	}

	u, err := l.arm.ArmAnswer(ctx, "pve3", false)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := url.Parse(u)
	if !l.arm.Ours(u) || !strings.HasSuffix(p.Path, "/pve3.img") || strings.Contains(p.Path, strings.Split(cdPath, "/")[2]) {
		t.Fatalf("answer image URL %s (the CD's %s)", u, cdPath)
	}
	if st, err := os.Stat(filepath.Join(l.dir, DirName, "pve3.img.json")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the answer image's record: %v %v; want 0600", st.Mode(), err)
	}
	if r := l.get(t, "HEAD", p.Path, ""); r.StatusCode != 200 || b.claims.Load() != 0 {
		t.Errorf("HEAD the answer image: %d, %d claims; want 200 and none", r.StatusCode, b.claims.Load())
	}
	r := l.get(t, "GET", p.Path, "")
	ai := body(r)
	if r.StatusCode != 200 || b.claims.Load() != 1 {
		t.Fatalf("GET the answer image: %d, %d claims; want 200, one", r.StatusCode, b.claims.Load())
	}
	got, msg := extract([]byte(ai), "/ANSWER.TOML")
	if a, err := answer.Decode([]byte(got), answer.Version92); err != nil || a.Global.FQDN.Name != "pve3.example.org" {
		t.Errorf("the answer image's answer: %v\n%s\n%s", err, got, msg)
	}
	if !strings.Contains(msg, "'"+bootassets.AnswerImageLabel+"'") {
		t.Errorf("xorriso does not see the label %s:\n%s", bootassets.AnswerImageLabel, msg)
	}
	if r := l.get(t, "GET", p.Path, "10.9.9.9:4000"); r.StatusCode != 403 {
		t.Errorf("another address: %d; want 403", r.StatusCode)
	}
	if r := l.get(t, "GET", p.Path, "", "Range", "bytes=0-15"); r.StatusCode != 206 || b.claims.Load() != 1 {
		t.Errorf("a range again: %d, %d claims; want 206 and still one", r.StatusCode, b.claims.Load())
	}

	if err := l.arm.Disarm(ctx, "pve3"); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{p.Path, cdPath} {
		if r := l.get(t, "GET", path, ""); r.StatusCode != 404 {
			t.Errorf("GET %s after Disarm: %d; want 404", path[len(path)-4:], r.StatusCode)
		}
	}
	if u, err := l.arm.ArmAnswer(ctx, "pve1", false); err != nil {
		t.Fatal(err)
	} else if p, _ := url.Parse(u); l.get(t, "GET", p.Path, "").StatusCode != 404 {
		t.Error("pve1, whose answer goes on its CD, has an answer image")
	}
}

// An answer image is refused where the window's release has no
// partition mode: ArmAnswer before any BMC is touched, and the media of
// a partition-mode node (409) if it was armed anyway.
func TestAnswerImageNeedsAPartitionMode(t *testing.T) {
	ctx := t.Context()
	for version, want := range map[string]error{"8.2": bootassets.ErrNoPartitionMode, "8.3": nil, "9.2.1": nil, "": nil} {
		t.Run("Proxmox VE "+version, func(t *testing.T) {
			dir := t.TempDir()
			if err := window.Write(dir, &window.Record{PID: os.Getpid(), HTTP: "127.0.0.1:8090", Started: time.Now().UTC(), MediaInstaller: version}); err != nil {
				t.Fatal(err)
			}
			d := Dir{StateDir: dir}
			if _, err := d.ArmAnswer(ctx, "pve3", false); !errors.Is(err, want) || (want == nil) != (err == nil) {
				t.Errorf("ArmAnswer: %v; want %v", err, want)
			}
			if _, err := d.Arm(ctx, "pve3", false); err != nil {
				t.Errorf("Arm (the CD): %v", err)
			}
		})
	}
	_, rel, _ := releaseISO(t)
	media := MediaOf(partitioned{&answering{}}, Release{Dir: rel, Version: answer.Version82})
	for _, k := range []Kind{Installer, AnswerImage} {
		if _, err := media(ctx, "pve3", k, "127.0.0.1"); err == nil || !strings.Contains(err.Error(), "no partition mode") {
			t.Errorf("kind %d of an 8.2 release: %v; want a refusal naming the partition mode", k, err)
		}
	}
}
