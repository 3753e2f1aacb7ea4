package bootassets

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNewcWriterPadsAndEndsWithATrailer(t *testing.T) {
	var b bytes.Buffer
	w := &newcWriter{w: &b}
	if err := w.file(newcEntry{Name: "proxmox.iso", Mode: 0o100644, Size: 5}, strings.NewReader("12345")); err != nil {
		t.Fatal(err)
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	want := "070701" + "00000001" + "000081A4" + "00000000" + "00000000" + "00000001" + "00000000" + "00000005" +
		"00000000" + "00000000" + "00000000" + "00000000" + "0000000C" + "00000000" + "proxmox.iso\x00" + // 110+12 = 122: pad 2
		"\x00\x00" + "12345\x00\x00\x00" +
		"070701" + "00000000" + "00000000" + "00000000" + "00000000" + "00000001" + "00000000" + "00000000" +
		"00000000" + "00000000" + "00000000" + "00000000" + "0000000B" + "00000000" + "TRAILER!!!\x00" + "\x00\x00\x00" // 110+11: pad 3
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("archive (-want +got):\n%q", diff)
	}
	if b.Len()%4 != 0 {
		t.Errorf("archive of %d bytes is not 4-byte aligned", b.Len())
	}
}

func TestNewcWriterRefuses(t *testing.T) {
	tests := map[string]struct {
		e    newcEntry
		body string
		want string
	}{
		"a file over 4 GiB":        {newcEntry{Name: "big", Size: 1 << 32}, "", "newc's limit"},
		"an empty name":            {newcEntry{Name: ""}, "", "want 1 to 4095 bytes"},
		"a body shorter than said": {newcEntry{Name: "a", Size: 10}, "abc", "got 3 of 10 bytes"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			w := &newcWriter{w: io.Discard}
			err := w.file(tc.e, strings.NewReader(tc.body))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestNewcMatchesGNUCpio(t *testing.T) {
	cpio := needTool(t, "cpio", "cpio")
	files := map[string][]byte{"a": []byte("x"), "bb": []byte("yy"), "ccc": []byte("zzz"), "dddd": nil, "dir/": nil, "dir/e": []byte("12345")}
	arch := newcArchive(t, files)
	cmd := exec.Command(cpio, "-t", "-v", "--quiet")
	cmd.Stdin = bytes.NewReader(arch)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cpio -t: %v", err)
	}
	var names []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		names = append(names, f[0][:1]+" "+f[4]+" "+f[len(f)-1])
	}
	want := []string{"- 1 a", "- 2 bb", "- 3 ccc", "- 0 dddd", "d 0 dir", "- 5 dir/e"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("cpio -tv type, size, name (-want +got):\n%s", diff)
	}
}

func TestInitrdScannerWalksArchivesInKernelOrder(t *testing.T) {
	a := newcArchive(t, map[string][]byte{"init": []byte("first"), "early": []byte("e")})
	b := newcArchive(t, map[string][]byte{"./init": []byte("second"), "/etc/x": []byte("x")})
	c := newcArchive(t, map[string][]byte{"init": []byte("third")})
	tests := map[string]struct {
		initrd []byte
		want   []string // name=content in order
	}{
		"one plain archive": {a, []string{"early=e", "init=first"}},
		"plain, zeros, gzip": {append(append(append([]byte{}, a...), 0, 0, 0, 0), compress(t, "gzip", b)...),
			[]string{"early=e", "init=first", "init=second", "etc/x=x"}},
		"two gzip members, then plain": {append(append(compress(t, "gzip", a), compress(t, "gzip", b)...), append([]byte{0, 0, 0, 0}, c...)...),
			[]string{"early=e", "init=first", "init=second", "etc/x=x", "init=third"}},
		"a gzip part holding two archives": {compress(t, "gzip", append(append([]byte{}, a...), b...)),
			[]string{"early=e", "init=first", "init=second", "etc/x=x"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got []string
			err := initrdScanner{}.scan(context.Background(), bytes.NewReader(tc.initrd), func(f cpioFile, body io.Reader) error {
				bb, err := io.ReadAll(body)
				got = append(got, f.Name+"="+string(bb))
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInitrdScannerReadsZstd(t *testing.T) {
	z := needTool(t, "zstd", "zstd")
	initrd := append(newcArchive(t, map[string][]byte{"early": []byte("e")}), compress(t, "zstd", newcArchive(t, map[string][]byte{"init": []byte("zinit")}))...)
	got, err := findInitrdFile(context.Background(), initrdScanner{zstd: z}, bytes.NewReader(initrd), "init")
	if err != nil || string(got) != "zinit" {
		t.Errorf("init = %q, %v; want zinit", got, err)
	}
	// Bytes after the last zstd frame (padding, an appended archive) do not
	// hide what was read.
	padded := append(append([]byte{}, initrd...), 0, 0, 0)
	if got, err := findInitrdFile(context.Background(), initrdScanner{zstd: z}, bytes.NewReader(padded), "init"); err != nil || string(got) != "zinit" {
		t.Errorf("padded: init = %q, %v; want zinit", got, err)
	}
	if _, err := findInitrdFile(context.Background(), initrdScanner{}, bytes.NewReader(initrd), "init"); !errors.Is(err, errUnsupportedInitrd) {
		t.Errorf("without zstd: err = %v, want errUnsupportedInitrd", err)
	}
}

func TestInitrdScannerRefuses(t *testing.T) {
	good := newcArchive(t, map[string][]byte{"init": []byte("x")})
	tests := map[string]struct {
		data []byte
		want error
		text string
	}{
		"an xz initrd":            {[]byte{0xfd, '7', 'z', 'X', 'Z', 0, 1, 2}, errUnsupportedInitrd, "xz-compressed"},
		"a bzip2 initrd":          {[]byte("BZh91AY&SY"), errUnsupportedInitrd, "bzip2-compressed"},
		"random bytes":            {[]byte("hello world"), errUnsupportedInitrd, "neither a cpio archive"},
		"an archive cut short":    {good[:len(good)-20], io.ErrUnexpectedEOF, ""},
		"a header of non-hex":     {append([]byte("070701"), bytes.Repeat([]byte("z"), 104)...), nil, "not 8 hex digits"},
		"a corrupt gzip member":   {[]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 0xde, 0xad}, nil, "gzip"},
		"an old binary cpio kind": {[]byte{0xc7, 0x71, 0, 0, 0, 0}, errUnsupportedInitrd, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := initrdScanner{}.scan(context.Background(), bytes.NewReader(tc.data), func(cpioFile, io.Reader) error { return nil })
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) || !strings.Contains(err.Error(), tc.text) {
				t.Errorf("err = %v, want %v containing %q", err, tc.want, tc.text)
			}
		})
	}
}

func TestFindInitrdFileTakesTheLastCopy(t *testing.T) {
	initrd := append(newcArchive(t, map[string][]byte{"init": []byte("old")}), newcArchive(t, map[string][]byte{"init": []byte("new")})...)
	got, err := findInitrdFile(context.Background(), initrdScanner{}, bytes.NewReader(initrd), "init")
	if err != nil || string(got) != "new" {
		t.Errorf("init = %q, %v; want new", got, err)
	}
	if _, err := findInitrdFile(context.Background(), initrdScanner{}, bytes.NewReader(initrd), "missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: err = %v, want not-exist", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := findInitrdFile(ctx, initrdScanner{}, bytes.NewReader(initrd), "init"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v, want context.Canceled", err)
	}
}

func FuzzInitrdScanner(f *testing.F) {
	a := newcArchive(f, map[string][]byte{"init": []byte("#!/bin/sh\n"), "etc/": nil})
	f.Add(a)
	f.Add(append(append([]byte{}, a...), 0, 0, 0, 0))
	f.Add(compress(f, "gzip", a))
	f.Add([]byte("070701"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := 0
		_ = initrdScanner{}.scan(context.Background(), bytes.NewReader(data), func(f cpioFile, body io.Reader) error {
			n++
			if n > 10000 {
				return errStopScan
			}
			_, err := io.Copy(io.Discard, body)
			return err
		})
	})
}

func FuzzNewcRoundTrip(f *testing.F) {
	f.Add("init", []byte("#!/bin/sh\n"), "proxmox.iso", []byte("CD001"))
	f.Add("a", []byte{}, "b/c", []byte{0})
	f.Fuzz(func(t *testing.T, n1 string, b1 []byte, n2 string, b2 []byte) {
		var buf bytes.Buffer
		w := &newcWriter{w: &buf}
		if w.file(newcEntry{Name: n1, Mode: 0o100644, Size: int64(len(b1))}, bytes.NewReader(b1)) != nil ||
			w.file(newcEntry{Name: n2, Mode: 0o100644, Size: int64(len(b2))}, bytes.NewReader(b2)) != nil || w.close() != nil {
			return // names the writer refuses
		}
		if n1 == newcTrailer || n2 == newcTrailer {
			return
		}
		var got [][]byte
		err := readNewcArchive(bufio.NewReader(&buf), func(f cpioFile, body io.Reader) error {
			b, err := io.ReadAll(body)
			got = append(got, b)
			return err
		})
		if err != nil {
			t.Fatalf("read back: %v", err)
		}
		if len(got) != 2 || !bytes.Equal(got[0], b1) || !bytes.Equal(got[1], b2) {
			t.Fatalf("read back %q, want %q and %q", got, b1, b2)
		}
	})
}
