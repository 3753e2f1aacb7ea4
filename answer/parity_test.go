package answer_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/answer"
)

// parityFile is an answer file for installer v: the spellings of its time
// (snake_case before 8.4), with extra appended to [global] and rest after
// [network]. The cases are our own, written from reading the installer's
// sources, cited at each rule below.
func parityFile(v answer.Version, global, disks, rest string) string {
	pw, list := "root-password", "disk-list"
	if !v.KebabCase() {
		pw, list = "root_password", "disk_list"
	}
	if disks == "" {
		disks = "filesystem = \"ext4\"\n" + list + " = [\"sda\"]\n"
	}
	disks = strings.ReplaceAll(disks, "LIST", list)
	if !strings.Contains(global, "fqdn") {
		global = "fqdn = \"node1.lab.example\"\n" + global
	}
	return "[global]\nkeyboard = \"de\"\ncountry = \"at\"\nmailto = \"ops@lab.example\"\ntimezone = \"UTC\"\n" +
		pw + " = \"correct-horse\"\n" + global +
		"\n[network]\nsource = \"from-dhcp\"\n" + rest +
		"\n[disk-setup]\n" + disks
}

// TestDecodeAgreesWithTheInstaller holds, for every rule of issue 17, a
// file the installer of a version accepts and one it refuses, per version
// where they differ. want checks the decoded answer; wantErr and msg the
// refusal.
func TestDecodeAgreesWithTheInstaller(t *testing.T) {
	zfs := func(raid string, n int) string {
		d := []string{`"sda"`, `"sdb"`, `"sdc"`, `"sdd"`, `"sde"`}[:n]
		return "filesystem = \"zfs\"\nLIST = [" + strings.Join(d, ", ") + "]\nzfs.raid = \"" + raid + "\"\n"
	}
	btrfs := func(raid string) string {
		return "filesystem = \"btrfs\"\nLIST = [\"sda\", \"sdb\"]\nbtrfs.raid = \"" + raid + "\"\n"
	}
	tests := map[string]struct {
		v                   answer.Version
		global, disks, rest string
		want                func(a *answer.Answer) any
		wantValue           any
		wantErr             error
		msg                 string
	}{
		// Upper-case RAID levels: proxmox-installer-common/src/options.rs
		// gained the aliases "RAID1", "RAIDZ-1" ... in package 8.3.3
		// (changelog: "allow lowercase and uppercase zfs raid levels");
		// 8.2's enum reads lower case only; 9.2's
		// proxmox-installer-types/src/answer.rs keeps both spellings.
		"RAIDZ-1 is read as raidz-1 by 8.3.3": {v: answer.Version833, disks: zfs("RAIDZ-1", 3),
			want: func(a *answer.Answer) any { return a.DiskSetup.ZFS.Raid }, wantValue: answer.RaidZ1},
		"RAID10 is read as raid10 by 9.2": {v: answer.Version92, disks: zfs("RAID10", 4),
			want: func(a *answer.Answer) any { return a.DiskSetup.ZFS.Raid }, wantValue: answer.Raid10},
		"btrfs RAID1 is read as raid1 by 9.2": {v: answer.Version92, disks: btrfs("RAID1"),
			want: func(a *answer.Answer) any { return a.DiskSetup.Btrfs.Raid }, wantValue: answer.Raid1},
		"RAIDZ-1 is refused by 8.2": {v: answer.Version82, disks: zfs("RAIDZ-1", 3),
			wantErr: answer.ErrInvalid, msg: `disk-setup.zfs.raid: "RAIDZ-1": write it in lower case`},
		"RAID1 is refused by an 8.3 request, read as 8.3.0": {v: answer.Version83, disks: zfs("RAID1", 2),
			wantErr: answer.ErrInvalid, msg: "disk-setup.zfs.raid"},
		"mixed-case Raid1 is refused by 9.2 too": {v: answer.Version92, disks: zfs("Raid1", 2),
			wantErr: answer.ErrInvalid, msg: `"Raid1"`},
		"upper-case RAIDZ-1 is no btrfs level": {v: answer.Version92, disks: btrfs("RAIDZ-1"),
			wantErr: answer.ErrInvalid, msg: "disk-setup.btrfs.raid"},

		// auth_token: proxmox-installer-types/src/answer.rs,
		// PostNotificationHookInfo, alias "auth_token" under the legacy
		// feature the installer builds with (9.2).
		"auth_token is read by 9.2": {v: answer.Version92,
			rest: "\n[post-installation-webhook]\nurl = \"https://prov.lab.example/hook\"\nauth_token = \"s3cret\"\n",
			want: func(a *answer.Answer) any { return a.PostInstallationWebhook.AuthToken }, wantValue: "s3cret"},
		"auth-token is read by 9.2": {v: answer.Version92,
			rest: "\n[post-installation-webhook]\nurl = \"https://prov.lab.example/hook\"\nauth-token = \"s3cret\"\n",
			want: func(a *answer.Answer) any { return a.PostInstallationWebhook.AuthToken }, wantValue: "s3cret"},
		"auth_token is refused by 9.1": {v: answer.Version91,
			rest:    "\n[post-installation-webhook]\nurl = \"https://prov.lab.example/hook\"\nauth_token = \"s3cret\"\n",
			wantErr: answer.ErrUnsupported, msg: "auth_token needs installer 9.2"},
		"both spellings at once are refused": {v: answer.Version92,
			rest:    "\n[post-installation-webhook]\nurl = \"https://prov.lab.example/hook\"\nauth-token = \"a\"\nauth_token = \"b\"\n",
			wantErr: answer.ErrInvalid, msg: "set twice"},

		// [global.fqdn] with only domain: proxmox-auto-installer/src/answer.rs
		// (8.4, FqdnExtendedConfig: source is #[serde(default)], from-dhcp),
		// proxmox-installer-types/src/answer.rs (9.2, FqdnFromDhcpConfig).
		"a domain alone is from DHCP on 8.4": {v: answer.Version84, global: "[global.fqdn]\ndomain = \"lab.example\"\n",
			want:      func(a *answer.Answer) any { return a.Global.FQDN },
			wantValue: answer.FQDN{FromDHCP: true, Domain: "lab.example"}},
		"a domain alone is from DHCP on 9.2": {v: answer.Version92, global: "fqdn.domain = \"lab.example\"\n",
			want:      func(a *answer.Answer) any { return a.Global.FQDN },
			wantValue: answer.FQDN{FromDHCP: true, Domain: "lab.example"}},
		"the table form is refused by 8.3": {v: answer.Version83, global: "fqdn.domain = \"lab.example\"\n",
			wantErr: answer.ErrUnsupported, msg: "global.fqdn.source needs installer 8.4"},

		// enabled: proxmox-auto-installer/src/answer.rs (9.1,
		// NetworkInterfacePinningOptionsAnswer: `enabled: bool` without a
		// default) and proxmox-installer-types/src/answer.rs (9.2, the same).
		"pinning with enabled is read by 9.1": {v: answer.Version91,
			rest: "\n[network.interface-name-pinning]\nenabled = true\nmapping = { \"24:8A:07:1E:05:BC\" = \"lan0\" }\n",
			want: func(a *answer.Answer) any { return a.Network.InterfaceNamePinning },
			wantValue: &answer.InterfaceNamePinning{Enabled: answer.Ptr(true),
				Mapping: map[string]string{"24:8a:07:1e:05:bc": "lan0"}}},
		"pinning without enabled is refused by 9.1": {v: answer.Version91,
			rest:    "\n[network.interface-name-pinning]\nmapping = { \"24:8a:07:1e:05:bc\" = \"lan0\" }\n",
			wantErr: answer.ErrInvalid, msg: "network.interface-name-pinning.enabled: required"},
		"an empty pinning table is refused by 9.2": {v: answer.Version92,
			rest:    "\n[network.interface-name-pinning]\n",
			wantErr: answer.ErrInvalid, msg: "missing field `enabled`"},

		// Numeric host names: the Fqdn type, proxmox-installer-common/src/
		// utils.rs up to 9.1 and proxmox-network-types/src/fqdn.rs in 9.2:
		// "hostname cannot be purely numeric" (Proxmox bug 1054).
		"a numeric host name is refused by 8.2": {v: answer.Version82, global: "fqdn = \"123.lab.example\"\n",
			wantErr: answer.ErrInvalid, msg: "hostname cannot be purely numeric"},
		"a numeric host name is refused by 9.2": {v: answer.Version92, global: "fqdn = \"123.lab.example\"\n",
			wantErr: answer.ErrInvalid, msg: "hostname cannot be purely numeric"},
		"digits then letters are a host name": {v: answer.Version92, global: "fqdn = \"123a.lab.example\"\n",
			want: func(a *answer.Answer) any { return a.Global.FQDN.Name }, wantValue: "123a.lab.example"},
		"a numeric domain label is no host name": {v: answer.Version92, global: "fqdn = \"node1.123.example\"\n",
			want: func(a *answer.Answer) any { return a.Global.FQDN.Name }, wantValue: "node1.123.example"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			file := parityFile(tc.v, tc.global, tc.disks, tc.rest)
			a, err := answer.Decode([]byte(file), tc.v)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("Decode = %v, want %v saying %q\nfile:\n%s", err, tc.wantErr, tc.msg, file)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode: %v\nfile:\n%s", err, file)
			}
			if diff := cmp.Diff(tc.wantValue, tc.want(a)); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPasswordLengthCountsBytes: proxmox-auto-installer/src/utils.rs,
// verify_email_and_root_password_settings, compares password.len() (a
// Rust str's length in bytes) with ROOT_PASSWORD_MIN_LENGTH, 8 from 8.4.
func TestPasswordLengthCountsBytes(t *testing.T) {
	tests := map[string]struct {
		v        answer.Version
		password string
		ok       bool
	}{
		"4 characters in 8 bytes pass on 9.2":  {answer.Version92, "äöüß", true},
		"7 characters in 7 bytes fail on 9.2":  {answer.Version92, "1234567", false},
		"4 characters in 7 bytes fail on 8.4":  {answer.Version84, "äöüa" + "", false},
		"8 ASCII characters pass on 8.4":       {answer.Version84, "12345678", true},
		"6 characters pass on 8.3, no minimum": {answer.Version83, "123456", true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := validAnswer()
			a.Global.RootPassword = tc.password
			err := answer.Validate(a, tc.v)
			if tc.ok && err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if !tc.ok && (!errors.Is(err, answer.ErrInvalid) || !strings.Contains(err.Error(), "must be at least 8 characters long")) {
				t.Fatalf("Validate = %v, want the installer's length message", err)
			}
		})
	}
}

// TestRenderWritesWhatTheInstallerNeeds: lower-case RAID levels for every
// version, and enabled in every pinning table (see the cases above).
func TestRenderWritesWhatTheInstallerNeeds(t *testing.T) {
	t.Run("RAID levels decoded from upper case render in lower case", func(t *testing.T) {
		a, err := answer.Decode([]byte(parityFile(answer.Version92, "", "filesystem = \"zfs\"\nLIST = [\"sda\", \"sdb\"]\nzfs.raid = \"RAID1\"\n", "")), answer.Version92)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []answer.Version{answer.Version82, answer.Version92} {
			a.Global.RootPassword = "correct-horse"
			out, err := answer.Render(a, v, answer.RenderOptions{})
			if err != nil {
				t.Fatalf("Render %s: %v", v, err)
			}
			if !strings.Contains(string(out), `raid = 'raid1'`) {
				t.Errorf("Render %s writes no lower-case raid1:\n%s", v, out)
			}
		}
	})
	t.Run("a mapping without enabled is refused, not written without it", func(t *testing.T) {
		a := validAnswer()
		a.Network.InterfaceNamePinning = &answer.InterfaceNamePinning{Mapping: map[string]string{"24:8a:07:1e:05:bc": "lan0"}}
		_, err := answer.Render(a, answer.Version92, answer.RenderOptions{})
		if !errors.Is(err, answer.ErrInvalid) || !strings.Contains(err.Error(), "interface-name-pinning.enabled: required") {
			t.Fatalf("Render = %v, want enabled required", err)
		}
	})
	t.Run("enabled = false is written", func(t *testing.T) {
		a := validAnswer()
		a.Network.InterfaceNamePinning = &answer.InterfaceNamePinning{Enabled: answer.Ptr(false), Mapping: map[string]string{"24:8a:07:1e:05:bc": "lan0"}}
		out, err := answer.Render(a, answer.Version92, answer.RenderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), "enabled = false") {
			t.Errorf("no enabled = false in:\n%s", out)
		}
		if _, err := answer.Decode(out, answer.Version92); err != nil {
			t.Errorf("the rendered file does not decode: %v\n%s", err, out)
		}
	})
}

// TestDeprecatedKeys: proxmox-auto-install-assistant/src/main.rs
// (validate_answer_file_keys, 9.0+) warns about every key with an
// underscore except inside network.filter and disk-setup.filter.
func TestDeprecatedKeys(t *testing.T) {
	file := "[global]\nroot_password = \"x\"\nkeyboard = \"de\"\n[network]\nsource = \"from-answer\"\nfilter.ID_NET_NAME = \"eno1\"\n" +
		"[disk-setup]\nfilter.ID_SERIAL = \"*\"\nfilter_match = \"all\"\nzfs.arc_max = 64\n"
	got, err := answer.DeprecatedKeys([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	want := []answer.DeprecatedKey{
		{Table: "disk-setup", Key: "filter_match", Instead: "filter-match"},
		{Table: "disk-setup.zfs", Key: "arc_max", Instead: "arc-max"},
		{Table: "global", Key: "root_password", Instead: "root-password"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DeprecatedKeys (-want +got):\n%s", diff)
	}
	if _, err := answer.DeprecatedKeys([]byte("[global")); !errors.Is(err, answer.ErrInvalid) {
		t.Errorf("not TOML: %v", err)
	}
}
