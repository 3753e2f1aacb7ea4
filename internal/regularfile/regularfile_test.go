package regularfile

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadRefusesWhatCouldHangOrExhaust(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ok.yaml")
	if err := os.WriteFile(file, []byte("name: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.yaml")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, make([]byte, 101), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tests := map[string]struct {
		path string
		want error
		text string
	}{
		"a regular file is read":           {file, nil, ""},
		"a FIFO is refused at once":        {fifo, ErrNotRegular, "a FIFO"},
		"a link to /dev/zero is refused":   {zero, ErrNotRegular, "a character device"},
		"a folder is refused":              {dir, ErrNotRegular, "a folder"},
		"a socket is refused":              {sock, syscall.ENXIO, ""},
		"a file over the limit is refused": {big, ErrTooLarge, "over 100 bytes"},
		"a missing file is not found":      {filepath.Join(dir, "nope"), os.ErrNotExist, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			data, err := Read(tc.path, 100)
			if time.Since(start) > time.Second {
				t.Errorf("took %v", time.Since(start))
			}
			if tc.want == nil {
				if err != nil || string(data) != "name: x\n" {
					t.Errorf("Read = %q, %v", data, err)
				}
				return
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) || !strings.Contains(err.Error(), tc.path) {
				t.Errorf("Read = %v, want %v naming %q and the path", err, tc.want, tc.text)
			}
		})
	}
}

func TestCheckReplaceableRefusesAllButARegularFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ok.yaml")
	if err := os.WriteFile(file, []byte("name: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "dir.yaml")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		path string
		text string // "" for nil
	}{
		"a regular file can be replaced": {file, ""},
		"a missing file can be created":  {filepath.Join(dir, "nope.yaml"), ""},
		"a symbolic link is refused":     {link, "a symbolic link to " + file},
		"a FIFO is refused":              {fifo, "a FIFO"},
		"a folder is refused":            {sub, "a folder"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := CheckReplaceable(tc.path)
			if tc.text == "" {
				if err != nil {
					t.Errorf("CheckReplaceable = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), tc.text) || !strings.Contains(err.Error(), tc.path) {
				t.Errorf("CheckReplaceable = %v, want ErrNotRegular naming %q and the path", err, tc.text)
			}
		})
	}
}
