package answer_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	toml "github.com/pelletier/go-toml/v2"

	"github.com/plasmactl/plasma-node/answer"
)

func TestRenderEscapesStrings(t *testing.T) {
	tests := map[string]func(a *answer.Answer){
		"a password with double quotes and backslashes": func(a *answer.Answer) { a.Global.RootPassword = `pw"with\quotes` },
		"a password with single quotes":                 func(a *answer.Answer) { a.Global.RootPassword = `it's "both" \'` },
		"a password in unicode":                         func(a *answer.Answer) { a.Global.RootPassword = "pässwörd-日本語-🔑" },
		"an SSH key comment with quotes":                func(a *answer.Answer) { a.Global.RootSSHKeys = []string{`ssh-ed25519 AAAA "o'neil"\laptop`} },
		"a filter key with a quote, space and dot": func(a *answer.Answer) {
			a.DiskSetup.Filter = map[string]string{`ID "SERIAL". x`: `*'x"\*`, "ÜMLAUT": "ü*"}
		},
		"a header-like password": func(a *answer.Answer) { a.Global.RootPassword = "x\"\n[global]" },
	}
	for name, change := range tests {
		t.Run(name, func(t *testing.T) {
			a := withOnly(change)
			out, err := answer.Render(a, answer.Version92, answer.RenderOptions{})
			if strings.Contains(a.Global.RootPassword, "\n") {
				if !errors.Is(err, answer.ErrInvalid) {
					t.Fatalf("Render of a password with a newline: error = %v, want ErrInvalid", err)
				}
				if strings.Contains(err.Error(), "[global]") {
					t.Errorf("error %q quotes the password", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			back, err := answer.Decode(out, answer.Version92)
			if err != nil {
				t.Fatalf("Decode: %v\n%s", err, out)
			}
			if diff := cmp.Diff(a, back); diff != "" {
				t.Errorf("round trip (-rendered +decoded):\n%s\n%s", diff, out)
			}
		})
	}
}

func TestRenderHeader(t *testing.T) {
	out, err := answer.Render(bootDiskAnswer(), answer.Version84, answer.RenderOptions{Header: "line one\n\n[global]\r\nroot-password = 'x'\n"})
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(string(out), "\n\n[global]")
	want := "# line one\n#\n# [global]\n# root-password = 'x'"
	if head != want {
		t.Errorf("header = %q, want %q", head, want)
	}
	for _, k := range keys(t, out) {
		if k == "global.root-password" {
			t.Errorf("a header line became a key:\n%s", out)
		}
	}
	if _, err := answer.Render(bootDiskAnswer(), answer.Version84, answer.RenderOptions{Header: "bell\a"}); !errors.Is(err, answer.ErrInvalid) {
		t.Errorf("header with a control character: error = %v, want ErrInvalid", err)
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	first, err := answer.Render(fullAnswer(), answer.Version92, answer.RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		again, err := answer.Render(fullAnswer(), answer.Version92, answer.RenderOptions{})
		if err != nil || !bytes.Equal(first, again) {
			t.Fatalf("Render differs between calls (err %v):\n%s\n---\n%s", err, first, again)
		}
	}
}

func TestRenderDoesNotChangeTheAnswer(t *testing.T) {
	a := fullAnswer()
	if _, err := answer.Render(a, answer.Version82, answer.RenderOptions{DropUnsupported: true}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fullAnswer(), a); diff != "" {
		t.Errorf("Render changed its input (-before +after):\n%s", diff)
	}
}

func TestDecodeFollowsTheInstallersParser(t *testing.T) {
	base := func(global, rest string) string {
		return "[global]\nkeyboard = \"de\"\ncountry = \"at\"\nfqdn = \"pve.example.com\"\nmailto = \"a@b.c\"\ntimezone = \"UTC\"\n" +
			global + "\n[network]\nsource = \"from-dhcp\"\n\n[disk-setup]\nfilesystem = \"ext4\"\ndisk-list = [\"sda\"]\n" + rest
	}
	tests := map[string]struct {
		file    string
		v       answer.Version
		wantErr error
		msg     string
	}{
		"an unknown key is refused": {
			file: base(`root-password = "12345678"`+"\nhostname = \"x\"", ""), v: answer.Version92,
			wantErr: answer.ErrInvalid, msg: "global.hostname: unknown key",
		},
		"both passwords are refused": {
			file: base("root-password = \"12345678\"\nroot-password-hashed = \"$6$a$b\"", ""), v: answer.Version92,
			wantErr: answer.ErrInvalid, msg: "cannot be set at the same time",
		},
		"the same key in both spellings is refused": {
			file: base("root-password = \"12345678\"\nroot_password = \"12345678\"", ""), v: answer.Version84,
			wantErr: answer.ErrInvalid, msg: "set twice",
		},
		"a kebab-case key is unknown to 8.3": {
			file: strings.ReplaceAll(base(`root_password = "123456"`, ""), "disk-list", "disk_list") + "filter-match = \"any\"\n", v: answer.Version83,
			wantErr: answer.ErrUnsupported, msg: "disk-setup.filter-match needs installer 8.4 or later",
		},
		"a value of the wrong type is refused": {
			file: base("root-password = 12345678", ""), v: answer.Version92,
			wantErr: answer.ErrInvalid, msg: "global.root-password: want a string, got an integer",
		},
		"a missing network source is refused by 9.2": {
			file: strings.Replace(base(`root-password = "12345678"`, ""), "source = \"from-dhcp\"\n", "", 1), v: answer.Version92,
			wantErr: answer.ErrInvalid, msg: "network.source: required",
		},
		"a short password is refused from 8.4": {
			file: base(`root-password = "1234567"`, ""), v: answer.Version84,
			wantErr: answer.ErrInvalid, msg: "`global.root-password` must be at least 8 characters long",
		},
		"broken TOML is refused": {
			file: "[global\n", v: answer.Version92, wantErr: answer.ErrInvalid, msg: "decode answer",
		},
		"a missing section is refused": {
			file: "[global]\n", v: answer.Version92, wantErr: answer.ErrInvalid, msg: "network: section required",
		},
		"an installer older than 8.2 is refused": {
			file: base(`root_password = "12345678"`, ""), v: 8<<16 | 1<<8, wantErr: answer.ErrUnsupported, msg: "8.1",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := answer.Decode([]byte(tc.file), tc.v)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Decode error = %v, want %v", err, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("Decode error %q lacks %q", err, tc.msg)
			}
			if strings.Contains(err.Error(), "12345678") {
				t.Errorf("Decode error %q quotes the password", err)
			}
		})
	}
	t.Run("a missing network source is from-dhcp before 9.2", func(t *testing.T) {
		file := strings.Replace(base(`root-password = "12345678"`, ""), "source = \"from-dhcp\"\n", "", 1)
		a, err := answer.Decode([]byte(file), answer.Version91)
		if err != nil {
			t.Fatal(err)
		}
		if a.Network.Source != answer.NetworkFromDHCP {
			t.Errorf("network.source = %q, want from-dhcp", a.Network.Source)
		}
	})
}

func ExampleRender() {
	a := &answer.Answer{
		Global: answer.Global{
			Keyboard: "en-us", Country: "us", FQDN: answer.FQDN{Name: "node1.mgmt.internal"},
			Mailto: "root@mgmt.internal", Timezone: "UTC",
			RootPassword:       "generated-password",
			RootPasswordHashed: "$6$examplesalt$wARakVFTqmchYhynZTEiRw/qKEDXdjz8EmQzmcMAJ8UpoRei/UPmgzy/UMsRZ1QJuEqPWBwqeedLsSmLTWWvf/",
		},
		Network:   answer.Network{Source: answer.NetworkFromDHCP},
		DiskSetup: answer.DiskSetup{Filesystem: answer.FilesystemExt4, Filter: map[string]string{"ID_SERIAL": "*25414A800205*"}},
	}
	for _, v := range []answer.Version{answer.Version82, answer.Version92} {
		out, err := answer.Render(a, v, answer.RenderOptions{Header: "for installer " + v.String()})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s\n", out)
	}
	// Output:
	// # for installer 8.2
	//
	// [global]
	// keyboard = 'en-us'
	// country = 'us'
	// fqdn = 'node1.mgmt.internal'
	// mailto = 'root@mgmt.internal'
	// timezone = 'UTC'
	// root_password = 'generated-password'
	//
	// [network]
	// source = 'from-dhcp'
	//
	// [disk-setup]
	// filesystem = 'ext4'
	//
	// [disk-setup.filter]
	// ID_SERIAL = '*25414A800205*'
	//
	// # for installer 9.2
	//
	// [global]
	// keyboard = 'en-us'
	// country = 'us'
	// fqdn = 'node1.mgmt.internal'
	// mailto = 'root@mgmt.internal'
	// timezone = 'UTC'
	// root-password-hashed = '$6$examplesalt$wARakVFTqmchYhynZTEiRw/qKEDXdjz8EmQzmcMAJ8UpoRei/UPmgzy/UMsRZ1QJuEqPWBwqeedLsSmLTWWvf/'
	//
	// [network]
	// source = 'from-dhcp'
	//
	// [disk-setup]
	// filesystem = 'ext4'
	//
	// [disk-setup.filter]
	// ID_SERIAL = '*25414A800205*'
}

var fuzzVersions = []answer.Version{answer.Version82, answer.Version83, answer.Version84, answer.Version90, answer.Version91, answer.Version92}

func FuzzRender(f *testing.F) {
	f.Add(uint8(0), "pve1", "example.com", "12345678", "ssh-ed25519 AAAA c", "ID_SERIAL", "*X*", "sda", "https://h/x", false)
	f.Add(uint8(5), "n", "a.b", `p"w\'`, `ssh-rsa AAAA "q"`, `K "e" y`, "ü'\"", "nvme0n1", "http://[::1]/", true)
	f.Add(uint8(3), "x", "y", "\x00\n", "k", "", "", "", "", true)
	f.Fuzz(func(t *testing.T, vi uint8, host, domain, pw, key, fk, fv, disk, hook string, drop bool) {
		v := fuzzVersions[int(vi)%len(fuzzVersions)]
		a := &answer.Answer{
			Global: answer.Global{
				Keyboard: "de", Country: "at", FQDN: answer.FQDN{Name: host + "." + domain},
				Mailto: "ops@example.com", Timezone: "UTC", RootPassword: pw, RootSSHKeys: []string{key},
			},
			Network:   answer.Network{Source: answer.NetworkFromDHCP},
			DiskSetup: answer.DiskSetup{Filesystem: answer.FilesystemZFS, ZFS: &answer.ZFSOptions{Raid: answer.Raid0}},
		}
		if fk != "" {
			a.DiskSetup.Filter = map[string]string{fk: fv}
		} else {
			a.DiskSetup.DiskList = []string{disk}
		}
		if hook != "" {
			a.PostInstallationWebhook = &answer.Webhook{URL: hook, AuthToken: pw}
		}
		out, err := answer.Render(a, v, answer.RenderOptions{DropUnsupported: drop, Header: key})
		if err != nil {
			if !errors.Is(err, answer.ErrInvalid) && !errors.Is(err, answer.ErrUnsupported) {
				t.Fatalf("Render error %v wraps neither ErrInvalid nor ErrUnsupported", err)
			}
			// An error names the other fields' values, quoted with %q:
			// a password found in one of those (raw or quoted: a key
			// "\x0000" quotes as `"\x0000"`, which holds "0000") is
			// not the password quoted.
			others := hook + host + domain + key + fk + fv + disk
			for _, v := range []string{hook, host + "." + domain, key, fk, fv, disk} {
				others += "\x00" + strconv.Quote(v)
			}
			if len(pw) >= 4 && strings.Contains(err.Error(), pw) && !strings.Contains(others, pw) {
				t.Fatalf("Render error %q quotes the password", err)
			}
			return
		}
		var m map[string]any
		if err := toml.Unmarshal(out, &m); err != nil {
			t.Fatalf("rendered answer is not TOML: %v\n%s", err, out)
		}
		back, err := answer.Decode(out, v)
		if err != nil {
			t.Fatalf("rendered answer does not decode for %s: %v\n%s", v, err, out)
		}
		again, err := answer.Render(back, v, answer.RenderOptions{Header: key})
		if err != nil || !bytes.Equal(out, again) {
			t.Fatalf("round trip changed the answer (err %v):\n%s\n---\n%s", err, out, again)
		}
	})
}

func FuzzDecode(f *testing.F) {
	for file := range installerExamples {
		data, err := os.ReadFile(filepath.Join("testdata", "installer", file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, uint8(5))
		f.Add(data, uint8(0))
	}
	f.Add([]byte("a = "+strings.Repeat("[", 5000)), uint8(5))
	f.Add([]byte("a = "+strings.Repeat("{b=", 5000)), uint8(5))
	f.Fuzz(func(t *testing.T, data []byte, vi uint8) {
		v := fuzzVersions[int(vi)%len(fuzzVersions)]
		a, err := answer.Decode(data, v)
		if err != nil {
			if !errors.Is(err, answer.ErrInvalid) && !errors.Is(err, answer.ErrUnsupported) {
				t.Fatalf("Decode error %v wraps neither ErrInvalid nor ErrUnsupported", err)
			}
			return
		}
		out, err := answer.Render(a, v, answer.RenderOptions{})
		if err != nil {
			t.Fatalf("a decoded answer does not render for %s: %v", v, err)
		}
		back, err := answer.Decode(out, v)
		if err != nil {
			t.Fatalf("a re-rendered answer does not decode: %v\n%s", err, out)
		}
		if diff := cmp.Diff(a, back); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

func TestRenderRoundTripsEveryOption(t *testing.T) {
	tests := map[string]func(a *answer.Answer){
		"every LVM size": func(a *answer.Answer) {
			a.DiskSetup = answer.DiskSetup{Filesystem: answer.FilesystemXFS, DiskList: []string{"nvme0n1"}, LVM: &answer.LVMOptions{
				HDSize: answer.Ptr(100.0), SwapSize: answer.Ptr(8.5), MaxRoot: answer.Ptr(30.0), MaxVZ: answer.Ptr(0.0), MinFree: answer.Ptr(16.0),
			}}
		},
		"every btrfs option": func(a *answer.Answer) {
			a.DiskSetup = answer.DiskSetup{Filesystem: answer.FilesystemBtrfs, DiskList: []string{"sda", "sdb", "sdc", "sdd"},
				Btrfs: &answer.BtrfsOptions{Raid: answer.Raid10, HDSize: answer.Ptr(200.0), Compress: "zstd"}}
		},
		"fqdn from DHCP with a fallback domain": func(a *answer.Answer) {
			a.Global.FQDN = answer.FQDN{FromDHCP: true, Domain: "mgmt.internal"}
			a.Global.RebootOnError = answer.Ptr(true)
			a.Global.RebootMode = answer.RebootModeReboot
		},
		"fqdn from DHCP alone": func(a *answer.Answer) { a.Global.FQDN = answer.FQDN{FromDHCP: true} },
		"a first-boot script from the ISO and a webhook without pinning": func(a *answer.Answer) {
			a.FirstBoot = &answer.FirstBoot{Source: answer.FirstBootFromISO, Ordering: answer.OrderingFullyUp}
			a.PostInstallationWebhook = &answer.Webhook{URL: "http://10.0.0.1:8090/done"}
		},
	}
	for name, change := range tests {
		for _, v := range []answer.Version{answer.Version84, answer.Version92} {
			t.Run(fmt.Sprintf("%s for %s", name, v), func(t *testing.T) {
				a := withOnly(change)
				out, err := answer.Render(a, v, answer.RenderOptions{})
				if err != nil {
					t.Fatal(err)
				}
				back, err := answer.Decode(out, v)
				if err != nil {
					t.Fatalf("Decode: %v\n%s", err, out)
				}
				if diff := cmp.Diff(a, back); diff != "" {
					t.Errorf("round trip (-rendered +decoded):\n%s\n%s", diff, out)
				}
			})
		}
	}
}
