package bootassets

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/internal/lockfile"
)

// logRecords is a slog handler that keeps warnings.
type logRecords struct {
	mu    sync.Mutex
	warns []string
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		l.mu.Lock()
		l.warns = append(l.warns, r.Message)
		l.mu.Unlock()
	}
	return nil
}
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecords) WithGroup(string) slog.Handler      { return l }

// netbootParts splits a netboot initrd into the original initrd and the
// files of the archive appended to it.
func netbootParts(t *testing.T, netboot []byte, origLen int) ([]byte, map[string]cpioFile, map[string][]byte) {
	t.Helper()
	pad := (4 - origLen%4) % 4
	if len(netboot) < origLen+pad {
		t.Fatalf("netboot initrd of %d bytes is shorter than the original's %d", len(netboot), origLen)
	}
	for _, c := range netboot[origLen : origLen+pad] {
		if c != 0 {
			t.Fatalf("padding after the original initrd is not zeros: % x", netboot[origLen:origLen+pad])
		}
	}
	heads := map[string]cpioFile{}
	bodies := map[string][]byte{}
	err := readNewcArchive(bufio.NewReader(bytes.NewReader(netboot[origLen+pad:])), func(f cpioFile, body io.Reader) error {
		b, err := io.ReadAll(body)
		heads[f.Name], bodies[f.Name] = f, b
		return err
	})
	if err != nil {
		t.Fatalf("parse the appended archive: %v", err)
	}
	return netboot[:origLen], heads, bodies
}

func readFile(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPrepareStagesAReleaseWithoutAnswerURL(t *testing.T) {
	iso := testISO(t)
	state := t.TempDir()
	var prog []Progress
	rel, err := Prepare(context.Background(), PrepareOptions{ISO: iso, StateDir: state, Progress: func(p Progress) { prog = append(prog, p) }})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(state, AssetsDir, "9.2-1")
	if rel.Dir != dir || rel.Name != "9.2-1" || rel.Product != "pve" || rel.ProductLong != "Proxmox VE" || rel.Version != "9.2" || rel.ISORelease != "1" {
		t.Errorf("release = %+v, want 9.2-1 of Proxmox VE in %s", rel, dir)
	}
	if rel.AskPatched || rel.FetchMode != "" {
		t.Errorf("AskPatched = %v, FetchMode = %q; want neither", rel.AskPatched, rel.FetchMode)
	}
	if len(rel.Warnings) != 1 || !strings.Contains(rel.Warnings[0], "no /auto-installer-mode.toml") {
		t.Errorf("warnings = %q, want one about the missing mode file", rel.Warnings)
	}
	// Kernel and initrd byte for byte; the ISO is the source.
	for asset, isoPath := range map[string]string{AssetKernel: isoKernel, AssetInitrd: isoInitrd} {
		if !bytes.Equal(readFile(t, filepath.Join(dir, asset)), readISOPath(t, iso, isoPath)) {
			t.Errorf("%s differs from the ISO's %s", asset, isoPath)
		}
	}
	src := readFile(t, iso)
	if !bytes.Equal(readFile(t, filepath.Join(dir, AssetISO)), src) {
		t.Error("proxmox.iso differs from the source ISO")
	}
	// The netboot initrd: the original, padding, then proxmox.iso.
	orig := readFile(t, filepath.Join(dir, AssetInitrd))
	head, heads, bodies := netbootParts(t, readFile(t, filepath.Join(dir, AssetNetbootInitrd)), len(orig))
	if !bytes.Equal(head, orig) {
		t.Error("the netboot initrd does not start with the original initrd")
	}
	if diff := cmp.Diff([]string{"proxmox.iso"}, keys(heads)); diff != "" {
		t.Errorf("appended archive entries (-want +got):\n%s", diff)
	}
	if h := heads["proxmox.iso"]; h.Mode != 0o100644 || h.Nlink != 1 {
		t.Errorf("proxmox.iso entry = %+v, want a regular 0644 file", h)
	}
	if !bytes.Equal(bodies["proxmox.iso"], src) {
		t.Error("the appended proxmox.iso differs from the source ISO")
	}
	// Manifest: every asset, and it verifies.
	var names []string
	for _, a := range rel.Assets {
		names = append(names, a.Name)
	}
	if diff := cmp.Diff([]string{AssetKernel, AssetInitrd, AssetISO, AssetNetbootInitrd}, names); diff != "" {
		t.Errorf("assets (-want +got):\n%s", diff)
	}
	got, err := VerifyRelease(context.Background(), dir)
	if err != nil {
		t.Fatalf("VerifyRelease: %v", err)
	}
	if diff := cmp.Diff(rel, got); diff != "" {
		t.Errorf("manifest read back (-prepared +read):\n%s", diff)
	}
	copied := slices.ContainsFunc(prog, func(p Progress) bool {
		return p.Kind == ProgressCopy && p.Step == "copy ISO" && p.Finished && p.Done == int64(len(src)) && p.Total == p.Done
	})
	end := prog[len(prog)-1]
	if !copied || !strings.HasPrefix(end.Step, "prepared 9.2-1 in ") || !end.Finished || end.Kind != ProgressNote {
		t.Errorf("progress lacks the copy and the end:\n%+v", prog)
	}
	warned := slices.ContainsFunc(prog, func(p Progress) bool { return p.Kind == ProgressWarning && p.Step == rel.Warnings[0] })
	if !warned {
		t.Errorf("progress lacks the warning %q:\n%+v", rel.Warnings[0], prog)
	}
	ents, _ := os.ReadDir(filepath.Join(state, AssetsDir))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("left %s behind", e.Name())
		}
	}
}

func keys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func TestGNUCpioReadsTheAppendedArchive(t *testing.T) {
	cpio := needTool(t, "cpio", "cpio")
	iso := testISO(t)
	state := t.TempDir()
	rel, err := Prepare(context.Background(), PrepareOptions{ISO: iso, StateDir: state, PatchAsk: true})
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := rel.Asset(AssetInitrd)
	netboot := readFile(t, rel.Path(AssetNetbootInitrd))
	appended := netboot[(orig.Size+3)/4*4:]
	list := exec.Command(cpio, "-t", "--quiet")
	list.Stdin = bytes.NewReader(appended)
	out, err := list.Output()
	if err != nil {
		t.Fatalf("cpio -t: %v", err)
	}
	if diff := cmp.Diff("init\nproxmox.iso\n", string(out)); diff != "" {
		t.Errorf("cpio -t (-want +got):\n%s", diff)
	}
	extract := exec.Command(cpio, "-i", "--quiet", "--to-stdout", "proxmox.iso")
	extract.Stdin = bytes.NewReader(appended)
	body, err := extract.Output()
	if err != nil {
		t.Fatalf("cpio -i: %v", err)
	}
	if !bytes.Equal(body, readFile(t, iso)) {
		t.Error("GNU cpio extracts a proxmox.iso that differs from the ISO")
	}
}

const testFingerprint = "ab:cd:ef:01:23:45:67:89:ab:cd:ef:01:23:45:67:89:ab:cd:ef:01:23:45:67:89:ab:cd:ef:01:23:45:67:89"

func TestPrepareBakesTheAnswerURLIntoACopy(t *testing.T) {
	needTool(t, "xorriso", "xorriso")
	tests := map[string]struct {
		fingerprint string
		fpFunc      func() (string, error)
		golden      string
		wantFP      string
	}{
		"a URL alone is baked in": {golden: "mode-9.2.toml"},
		"a fingerprint is written in the installer's form": {
			fingerprint: testFingerprint, golden: "mode-9.2-fp.toml",
			wantFP: strings.ToUpper(testFingerprint),
		},
		"auto takes the fingerprint from the hook": {
			fingerprint: CertFingerprintAuto, fpFunc: func() (string, error) { return strings.ReplaceAll(testFingerprint, ":", ""), nil },
			golden: "mode-9.2-fp.toml", wantFP: strings.ToUpper(testFingerprint),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			iso := buildISO(t, proxmoxLayout(t, testInitrd(t, "gzip", testInit(t))), isoOpts{name: "proxmox-ve_9.2-1.iso"})
			srcBefore := readFile(t, iso)
			state := t.TempDir()
			url := "https://192.0.2.10:8443/answer"
			rel, err := Prepare(context.Background(), PrepareOptions{ISO: iso, StateDir: state, AnswerURL: url,
				CertFingerprint: tc.fingerprint, FingerprintFunc: tc.fpFunc, AnswerAuthToken: AnswerAuthTokenNone})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(readFile(t, iso), srcBefore) {
				t.Error("the source ISO changed")
			}
			if rel.FetchMode != "http" || rel.AnswerURL != url || rel.CertFingerprint != tc.wantFP {
				t.Errorf("release fetch = %q %q %q, want http %q %q", rel.FetchMode, rel.AnswerURL, rel.CertFingerprint, url, tc.wantFP)
			}
			prepared := rel.Path(AssetISO)
			golden(t, tc.golden, readISOPath(t, prepared, isoModeFile))
			// The rest of the ISO is kept: files, boot record, volume uuid.
			for _, p := range []string{isoKernel, isoInitrd, isoCapableFlag, isoCDInfo} {
				if !bytes.Equal(readISOPath(t, prepared, p), readISOPath(t, iso, p)) {
					t.Errorf("%s changed in the prepared ISO", p)
				}
			}
			if got, want := volumeDate(t, prepared), volumeDate(t, iso); got != want || want == "" {
				t.Errorf("volume uuid = %q, want the source's %q", got, want)
			}
			if _, err := lookupISO(t, prepared, "/boot.catalog"); err != nil {
				t.Errorf("the prepared ISO lost its boot catalog: %v", err)
			}
			// The netboot initrd carries the prepared ISO.
			orig := readFile(t, rel.Path(AssetInitrd))
			_, _, bodies := netbootParts(t, readFile(t, rel.Path(AssetNetbootInitrd)), len(orig))
			if !bytes.Equal(bodies["proxmox.iso"], readFile(t, prepared)) {
				t.Error("the appended proxmox.iso is not the prepared ISO")
			}
			if a, _ := rel.Asset(AssetISO); a.SHA256 == rel.SourceSHA256 {
				t.Error("proxmox.iso has the source's checksum, want the prepared copy's")
			}
			info, err := inspectISO(context.Background(), prepared)
			if err != nil {
				t.Fatal(err)
			}
			want := &inspectedISO{Release: "9.2-1", Product: "pve", ProductLong: "Proxmox VE", Version: "9.2", ISORelease: "1",
				VolumeID: "PVE", FetchMode: "http", AnswerURL: url, CertFingerprint: tc.wantFP}
			if diff := cmp.Diff(want, info); diff != "" {
				t.Errorf("inspectISO of the prepared ISO (-want +got):\n%s", diff)
			}
		})
	}
}

func volumeDate(t *testing.T, iso string) string {
	t.Helper()
	return openTestISO(t, iso).volumeDate
}

func lookupISO(t *testing.T, iso, p string) (*isoRecord, error) {
	t.Helper()
	return openTestISO(t, iso).lookup(p)
}

func TestPrepareRefusesBadOptions(t *testing.T) {
	iso := filepath.Join(t.TempDir(), "x.iso") // never opened: options fail first
	tests := map[string]struct {
		opts PrepareOptions
		want string
	}{
		"no ISO":                    {PrepareOptions{StateDir: "s"}, "no ISO given"},
		"no state dir":              {PrepareOptions{ISO: iso}, "no state dir"},
		"a relative answer URL":     {PrepareOptions{ISO: iso, StateDir: "s", AnswerURL: "/answer"}, `answer URL "/answer": want an absolute http:// or https:// URL`},
		"an ftp answer URL":         {PrepareOptions{ISO: iso, StateDir: "s", AnswerURL: "ftp://h/answer"}, "want an absolute http://"},
		"a quote in the answer URL": {PrepareOptions{ISO: iso, StateDir: "s", AnswerURL: `http://h/a"b`}, "must be percent-encoded"},
		"a fingerprint without URL": {PrepareOptions{ISO: iso, StateDir: "s", CertFingerprint: testFingerprint}, "needs an answer URL"},
		"a short fingerprint": {PrepareOptions{ISO: iso, StateDir: "s", AnswerURL: "https://h/a", CertFingerprint: "AB:CD"},
			`certificate fingerprint "AB:CD": want the certificate's SHA-256 as 64 hex digits`},
		"auto without a hook": {PrepareOptions{ISO: iso, StateDir: "s", AnswerURL: "https://h/a", CertFingerprint: "auto"}, `"auto" but no certificate`},
		"auto whose hook fails": {PrepareOptions{ISO: iso, StateDir: "s", AnswerURL: "https://h/a", CertFingerprint: "auto",
			FingerprintFunc: func() (string, error) { return "", fs.ErrNotExist }}, "read certificate fingerprint: file does not exist"},
		"a release name with a slash": {PrepareOptions{ISO: iso, StateDir: "s", Release: "../x"}, `release name "../x"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Prepare(context.Background(), tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestPrepareNamesXorrisoWhenMissing(t *testing.T) {
	iso := testISO(t)
	t.Setenv("PATH", t.TempDir())
	_, err := Prepare(context.Background(), PrepareOptions{ISO: iso, StateDir: t.TempDir(), AnswerURL: "http://192.0.2.10:8090/answer"})
	if !errors.Is(err, ErrXorrisoMissing) || !strings.Contains(err.Error(), "Debian package xorriso") {
		t.Errorf("err = %v, want ErrXorrisoMissing naming the Debian package", err)
	}
}

func TestPrepareRefusesWhatIsNotAnAutoInstallISO(t *testing.T) {
	needTool(t, "xorriso", "xorriso")
	notISO := filepath.Join(t.TempDir(), "notes.iso")
	os.WriteFile(notISO, bytes.Repeat([]byte("not an ISO at all. "), 4096), 0o644)
	noFlag := proxmoxLayout(t, testInitrd(t, "gzip", testInit(t)))
	delete(noFlag, "auto-installer-capable")
	tests := map[string]struct {
		iso  string
		want string
	}{
		"a file that is no ISO": {notISO, "no ISO 9660 primary volume descriptor"},
		"a Debian-like ISO": {buildISO(t, map[string][]byte{"install.amd/vmlinuz": []byte("k"), "README.txt": []byte("hi")}, isoOpts{}),
			"not a Proxmox installer ISO"},
		"a Proxmox ISO older than 8.2": {buildISO(t, noFlag, isoOpts{}), "older than VE 8.2"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			state := t.TempDir()
			_, err := Prepare(context.Background(), PrepareOptions{ISO: tc.iso, StateDir: state})
			if !errors.Is(err, ErrNotAutoInstallISO) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrNotAutoInstallISO saying %q", err, tc.want)
			}
			if _, err := inspectISO(context.Background(), tc.iso); !errors.Is(err, ErrNotAutoInstallISO) {
				t.Errorf("inspectISO err = %v, want ErrNotAutoInstallISO", err)
			}
			if ents, _ := os.ReadDir(filepath.Join(state, AssetsDir)); len(ents) != 0 {
				t.Errorf("a refused ISO left %d entries under assets/", len(ents))
			}
		})
	}
}

func TestPreparePatchesTheBootDiskPrompt(t *testing.T) {
	needTool(t, "xorriso", "xorriso")
	noAnchor := bytes.ReplaceAll(testInit(t), []byte(InitPatchAnchor), []byte("cp /etc/hostid /somewhere/else/"))
	patched, err := patchInit(testInit(t))
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		initrd   func(t *testing.T) []byte
		path     string // PATH for the run; "" keeps it
		wantInit []byte // nil: unpatched
		wantWarn string
	}{
		"a gzip initrd is patched": {
			initrd:   func(t *testing.T) []byte { return testInitrd(t, "gzip", testInit(t)) },
			wantInit: patched,
		},
		"a plain cpio initrd is patched": {
			initrd:   func(t *testing.T) []byte { return testInitrd(t, "", testInit(t)) },
			wantInit: patched,
		},
		"a zstd initrd is patched with the zstd command": {
			initrd:   func(t *testing.T) []byte { return testInitrd(t, "zstd", testInit(t)) },
			wantInit: patched,
		},
		"an early microcode archive before the gzip part is walked over": {
			initrd: func(t *testing.T) []byte {
				early := newcArchive(t, map[string][]byte{"kernel/x86/microcode/GenuineIntel.bin": []byte("ucode"), "init": []byte("#!/bin/sh\n# not this one\n")})
				return append(early, testInitrd(t, "gzip", testInit(t))...)
			},
			wantInit: patched,
		},
		"an init without the anchor stays unpatched, with a warning": {
			initrd:   func(t *testing.T) []byte { return testInitrd(t, "gzip", noAnchor) },
			wantWarn: "has no line " + InitPatchAnchor,
		},
		"an initrd without init stays unpatched, with a warning": {
			initrd:   func(t *testing.T) []byte { return testInitrd(t, "gzip", nil) },
			wantWarn: "cannot read /init",
		},
		"a zstd initrd without the zstd command stays unpatched, with a warning": {
			initrd:   func(t *testing.T) []byte { return testInitrd(t, "zstd", testInit(t)) },
			path:     "empty",
			wantWarn: "no zstd command found (Debian package zstd)",
		},
		"an xz initrd stays unpatched, with a warning": {
			initrd:   func(t *testing.T) []byte { return append([]byte{0xfd, '7', 'z', 'X', 'Z', 0}, make([]byte, 64)...) },
			wantWarn: "xz-compressed initrd",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			iso := buildISO(t, proxmoxLayout(t, tc.initrd(t)), isoOpts{})
			if tc.path != "" {
				t.Setenv("PATH", t.TempDir())
			}
			logs := &logRecords{}
			rel, err := Prepare(context.Background(), PrepareOptions{ISO: iso, StateDir: t.TempDir(), PatchAsk: true, Logger: slog.New(logs)})
			if err != nil {
				t.Fatal(err)
			}
			orig := readFile(t, rel.Path(AssetInitrd))
			_, heads, bodies := netbootParts(t, readFile(t, rel.Path(AssetNetbootInitrd)), len(orig))
			if rel.AskPatched != (tc.wantInit != nil) {
				t.Errorf("AskPatched = %v, want %v", rel.AskPatched, tc.wantInit != nil)
			}
			if tc.wantInit == nil {
				if _, ok := heads["init"]; ok {
					t.Error("an unpatched release carries an init")
				}
				if _, err := os.Stat(rel.Path(AssetAskOverlay)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("an unpatched release has an overlay (stat: %v)", err)
				}
				joined := strings.Join(logs.warns, "\n")
				if !strings.Contains(joined, "boot-disk prompt left out") || !strings.Contains(strings.Join(rel.Warnings, "\n"), tc.wantWarn) {
					t.Errorf("warnings logged %q, recorded %q; want one saying %q", logs.warns, rel.Warnings, tc.wantWarn)
				}
				return
			}
			if diff := cmp.Diff([]string{"init", "proxmox.iso"}, keys(heads)); diff != "" {
				t.Errorf("appended entries (-want +got):\n%s", diff)
			}
			if heads["init"].Mode != 0o100755 {
				t.Errorf("init mode = %o, want 100755", heads["init"].Mode)
			}
			if !bytes.Equal(bodies["init"], tc.wantInit) {
				t.Errorf("appended init differs from the patched one:\n%s", bodies["init"])
			}
			// The overlay holds the same init alone.
			var overlay []string
			err = readNewcArchive(bufio.NewReader(bytes.NewReader(readFile(t, rel.Path(AssetAskOverlay)))), func(f cpioFile, body io.Reader) error {
				b, err := io.ReadAll(body)
				if f.Name == "init" && f.Mode == 0o100755 && bytes.Equal(b, tc.wantInit) {
					overlay = append(overlay, "patched init")
				} else {
					overlay = append(overlay, f.Name)
				}
				return err
			})
			if diff := cmp.Diff([]string{"patched init"}, overlay); diff != "" || err != nil {
				t.Errorf("overlay entries (-want +got), err %v:\n%s", err, diff)
			}
			if _, ok := rel.Asset(AssetAskOverlay); !ok {
				t.Error("the manifest does not list the overlay")
			}
			// The kernel unpacks the appended init over the original one.
			got, err := findInitrdFile(context.Background(), initrdScanner{}, bytes.NewReader(readFile(t, rel.Path(AssetNetbootInitrd))[:(len(orig)+3)/4*4]), "init")
			if err == nil && bytes.Equal(got, tc.wantInit) {
				t.Error("the original part already holds the patched init: the patch was not appended")
			}
		})
	}
}

func TestPrepareRefusesWhileAnotherRuns(t *testing.T) {
	iso := testISO(t)
	state := t.TempDir()
	os.MkdirAll(filepath.Join(state, AssetsDir), 0o755)
	l, err := lockfile.TryLock(filepath.Join(state, AssetsDir, ".lock"), "another prepare")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	_, err = Prepare(context.Background(), PrepareOptions{ISO: iso, StateDir: state})
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "another prepare (pid") {
		t.Errorf("err = %v, want ErrBusy naming the holder", err)
	}
}

func TestPrepareStopsWhenCancelled(t *testing.T) {
	iso := testISO(t)
	tests := map[string]struct {
		word string // cancel at the first progress report holding it; "" before the start
	}{
		"a context ended before the start":    {},
		"a context ended while copying":       {word: "copy ISO"},
		"a context ended at the initrd build": {word: "build netboot initrd"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			state := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.word == "" {
				cancel()
			}
			cancelOn := func(p Progress) {
				if strings.Contains(p.Step, tc.word) {
					cancel()
				}
			}
			_, err := Prepare(ctx, PrepareOptions{ISO: iso, StateDir: state, Progress: cancelOn})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			ents, _ := os.ReadDir(filepath.Join(state, AssetsDir))
			for _, e := range ents {
				if e.Name() != ".lock" {
					t.Errorf("a cancelled prepare left %s", e.Name())
				}
			}
		})
	}
}

func TestProgressReportsEachPercentAndTheEnd(t *testing.T) {
	var got []Progress
	r := reporter{fn: func(p Progress) { got = append(got, p) }}
	c := r.counter("copy", 1000)
	for range 200 {
		c.Write(make([]byte, 5)) // 0.5% a write: every other one reports
	}
	c.finish()
	c.finish()
	tiny := r.counter("tiny", 10)
	tiny.Write(make([]byte, 3))
	tiny.Write(make([]byte, 7))
	tiny.finish()
	r.note("baking")
	r.warn("careful")
	if len(got) != 100+1+2+1+2 {
		t.Fatalf("got %d reports, want 106:\n%+v", len(got), got)
	}
	want := []Progress{
		{Kind: ProgressCopy, Step: "copy", Done: 10, Total: 1000},
		{Kind: ProgressCopy, Step: "copy", Done: 1000, Total: 1000},
		{Kind: ProgressCopy, Step: "copy", Done: 1000, Total: 1000, Finished: true},
		{Kind: ProgressCopy, Step: "tiny", Done: 3, Total: 10},
		{Kind: ProgressCopy, Step: "tiny", Done: 10, Total: 10},
		{Kind: ProgressCopy, Step: "tiny", Done: 10, Total: 10, Finished: true},
		{Kind: ProgressNote, Step: "baking", Finished: true},
		{Kind: ProgressWarning, Step: "careful", Finished: true},
	}
	if diff := cmp.Diff(want, append(got[:1:1], got[99:]...)); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
	if c := (reporter{}).counter("discarded", 10); c != nil {
		t.Errorf("a nil callback makes counter %+v, want nil", c)
	}
}
