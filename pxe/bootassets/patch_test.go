package bootassets

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPatchInit(t *testing.T) {
	block := initPatchBlock
	tests := map[string]struct {
		init    string
		want    string
		wantErr error
	}{
		"the block follows the indented anchor": {
			init: "a\n    " + InitPatchAnchor + "\nb\n",
			want: "a\n    " + InitPatchAnchor + "\n" + block + "b\n",
		},
		"an anchor on the last line without newline": {
			init: "a\n" + InitPatchAnchor,
			want: "a\n" + InitPatchAnchor + "\n" + block,
		},
		"only the first anchor gets the block": {
			init: InitPatchAnchor + "\n" + InitPatchAnchor + "\n",
			want: InitPatchAnchor + "\n" + block + InitPatchAnchor + "\n",
		},
		"an init patched before is left alone": {
			init: "a\n" + InitPatchAnchor + "\n" + block + "b\n",
			want: "a\n" + InitPatchAnchor + "\n" + block + "b\n",
		},
		"a commented-out anchor is not the anchor": {
			init: "# " + InitPatchAnchor + "\n", wantErr: errNoAnchor,
		},
		"an init without the anchor is refused": {
			init: "#!/bin/sh\necho hi\n", wantErr: errNoAnchor,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := patchInit([]byte(tc.init))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("patched init (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPatchedInitIsGoldenAndParses(t *testing.T) {
	got, err := patchInit(testInit(t))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "init.patched", got)
	shells := []string{"sh"}
	if _, err := exec.LookPath("busybox"); err == nil {
		shells = append(shells, "busybox")
	}
	for _, sh := range shells {
		args := []string{"-n", "-c", string(got)}
		if sh == "busybox" {
			args = append([]string{"sh"}, args...)
		}
		if out, err := exec.Command(sh, args...).CombinedOutput(); err != nil {
			t.Errorf("%s -n: %v\n%s", sh, err, out)
		}
	}
}

// runPatchBlock runs the patch block in a scratch root with stdin and
// returns the console output, the commands run as "mount" and the root.
func runPatchBlock(t *testing.T, cmdline, modeFile, input string) (console, mounts, root string) {
	t.Helper()
	sh := "sh"
	if p, err := exec.LookPath("busybox"); err == nil {
		sh = p // the installer's shell
	}
	root = t.TempDir()
	write := func(p, s string) {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("proc/cmdline", cmdline+"\n")
	write("sys/block/sda/size", "1953525168\n") // 1000 GB
	write("sys/block/sda/device/model", "WDC WD10EZEX\n")
	write("sys/block/nvme0n1/size", "500118192\n")
	write("sys/block/loop0/size", "100\n")
	write("sys/block/sr0/size", "100\n")
	write("mnt/.installer-mp/etc/dhcp/dhclient.conf", "timeout 10;\nretry 1;\n")
	write("mnt/.workdir/.keep", "")
	write("in", input)
	if modeFile != "" {
		write("mnt/auto-installer-mode.toml", modeFile)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	args := []string{"-c", "set -u; console=tty1; " + initPatchBlock}
	if filepath.Base(sh) == "busybox" {
		args = append([]string{"sh"}, args...)
	}
	cmd := exec.CommandContext(ctx, sh, args...)
	cmd.Env = append(os.Environ(), "plasma_root="+root, "plasma_in="+filepath.Join(root, "in"),
		"plasma_out="+filepath.Join(root, "console"), "plasma_mount=echo mount")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", sh, err, out)
	}
	c, _ := os.ReadFile(filepath.Join(root, "console"))
	return string(c), string(out), root
}

func TestPatchBlockAsksForTheBootDisk(t *testing.T) {
	mode := "mode = \"http\"\npartition_label = \"proxmox-ais\"\n\n[http]\nurl = \"%s\"\ncert_fingerprint = \"AB:CD\"\n"
	tests := map[string]struct {
		url, input string
		wantURL    string
		wantDisk   string
	}{
		"a number picks the listed disk": {
			url: "http://192.0.2.10:8090/answer", input: "2\n",
			wantURL: "http://192.0.2.10:8090/answer?bootdisk=sda", wantDisk: "sda",
		},
		"a name picks that disk, after a wrong answer": {
			url: "http://192.0.2.10:8090/answer", input: "7\nsr0\nnvme0n1\n",
			wantURL: "http://192.0.2.10:8090/answer?bootdisk=nvme0n1", wantDisk: "nvme0n1",
		},
		"a URL with a query gets the disk appended": {
			url: "https://h/answer?site=lab&x=1", input: "1\n",
			wantURL: "https://h/answer?site=lab&x=1&bootdisk=nvme0n1", wantDisk: "nvme0n1",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			mf := strings.Replace(mode, "%s", tc.url, 1)
			console, mounts, root := runPatchBlock(t, "ramdisk_size=16777216 rw quiet "+AskDiskKernelArg+" proxmox-start-auto-installer", mf, tc.input)
			for _, want := range []string{"1) nvme0n1  256 GB", "2) sda  1000 GB  WDC WD10EZEX", "installing on " + tc.wantDisk} {
				if !strings.Contains(console, want) {
					t.Errorf("console lacks %q:\n%s", want, console)
				}
			}
			for _, hidden := range []string{"loop0", ") sr0"} {
				if strings.Contains(console, hidden) {
					t.Errorf("console lists %s:\n%s", hidden, console)
				}
			}
			newMode := filepath.Join(root, "mnt/.workdir/auto-installer-mode.toml")
			got, err := os.ReadFile(newMode)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(strings.Replace(mode, "%s", tc.wantURL, 1), string(got)); diff != "" {
				t.Errorf("rewritten mode file (-want +got):\n%s", diff)
			}
			wantMount := "mount --bind " + newMode + " " + filepath.Join(root, "mnt/.installer-mp/cdrom/auto-installer-mode.toml") + "\n"
			if mounts != wantMount {
				t.Errorf("ran %q, want %q", mounts, wantMount)
			}
			if dh, _ := os.ReadFile(filepath.Join(root, "mnt/.installer-mp/etc/dhcp/dhclient.conf")); string(dh) != "timeout 60;\nretry 1;\n" {
				t.Errorf("dhclient.conf = %q, want the timeout raised to 60", dh)
			}
		})
	}
}

func TestPatchBlockStaysQuietWithoutTheKernelArg(t *testing.T) {
	console, mounts, root := runPatchBlock(t, "ramdisk_size=16777216 rw quiet plasma.askdisk=0", "mode = \"http\"\n", "1\n")
	if console != "" || mounts != "" {
		t.Errorf("without %s the block printed %q and ran %q", AskDiskKernelArg, console, mounts)
	}
	if _, err := os.Stat(filepath.Join(root, "mnt/.workdir/auto-installer-mode.toml")); err == nil {
		t.Error("without the kernel arg the block rewrote the mode file")
	}
	if dh, _ := os.ReadFile(filepath.Join(root, "mnt/.installer-mp/etc/dhcp/dhclient.conf")); !bytes.HasPrefix(dh, []byte("timeout 60;")) {
		t.Errorf("dhclient.conf = %q, want the timeout raised anyway", dh)
	}
	_, mounts, _ = runPatchBlock(t, AskDiskKernelArg, "", "1\n")
	if !strings.Contains(mounts, "no auto-installer-mode.toml, not asking") {
		t.Errorf("with no mode file the block said %q, want a warning", mounts)
	}
}

func FuzzPatchInit(f *testing.F) {
	f.Add([]byte("#!/bin/sh\n    " + InitPatchAnchor + "\necho\n"))
	f.Add([]byte(InitPatchAnchor))
	f.Add([]byte("no anchor\r\n"))
	f.Fuzz(func(t *testing.T, init []byte) {
		out, err := patchInit(init)
		if err != nil {
			return
		}
		if !bytes.Contains(out, []byte(initPatchMarker)) {
			t.Fatal("patched init lacks the block")
		}
		again, err := patchInit(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("patching twice changed the init (err %v)", err)
		}
	})
}
