package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/internal/cli"
)

type result struct {
	code        int
	stdout, err string
}

func np(t *testing.T, state string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	full := append([]string{"--state-dir", state, "--secrets-dir", filepath.Join(state, "secrets")}, args...)
	code := run(context.Background(), full, &out, &errb)
	return result{code, out.String(), errb.String()}
}

func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasPrefix(d.Name(), ".") {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

func TestRegisterListUnregister(t *testing.T) {
	state := t.TempDir()
	r := np(t, state, "register", "pve3", "--mac", "AA-BB-CC-DD-EE-FF", "--boot-disk", "25414A800205", "--pool", "tanka1=single:50026B73842AD86F")
	if r.code != 0 {
		t.Fatalf("register: %d %s", r.code, r.err)
	}
	b, err := os.ReadFile(filepath.Join(state, "registrations", "pve3.json"))
	if err != nil {
		t.Fatal(err)
	}
	var reg map[string]any
	json.Unmarshal(b, &reg)
	if diff := cmp.Diff([]any{"aa:bb:cc:dd:ee:ff"}, reg["macs"]); diff != "" || reg["boot_disk"] != "25414A800205" {
		t.Errorf("registration file: %s\n%s", diff, b)
	}
	if r := np(t, state, "register", "pve3", "--mac", "aa:bb:cc:dd:ee:01"); r.code != 0 || !strings.Contains(r.stdout, "Re-registered") {
		t.Errorf("re-register: %d %q %q", r.code, r.stdout, r.err)
	}
	r = np(t, state, "list", "-o", "json")
	var st []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || len(st) != 1 || st[0]["state"] != "pending" {
		t.Errorf("list -o json = %s (%v)", r.stdout, err)
	}
	if r := np(t, state, "list"); !strings.Contains(r.stdout, "pve3") || !strings.Contains(r.stdout, "pending") {
		t.Errorf("list:\n%s", r.stdout)
	}
	if r := np(t, state, "unregister", "pve3"); r.code != 0 {
		t.Errorf("unregister: %d %s", r.code, r.err)
	}
	if r := np(t, state, "unregister", "pve3"); r.code != 1 || !strings.Contains(r.err, "pve3") {
		t.Errorf("unregister of an unknown name: exit %d %q, want 1", r.code, r.err)
	}
}

func TestRegisterRefusesBadInput(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"a bad MAC":              {[]string{"register", "n1", "--mac", "aa:bb:cc"}, "invalid MAC address"},
		"a bad pool spec":        {[]string{"register", "n1", "--pool", "tank=raid5:sdb"}, "invalid pool layout"},
		"a pool without disks":   {[]string{"register", "n1", "--pool", "tank=mirror:"}, "no disks"},
		"a bad boot disk":        {[]string{"register", "n1", "--boot-disk", "/dev/sda"}, "--boot-disk"},
		"a bad name":             {[]string{"register", "bad name!"}, "invalid"},
		"a missing key file":     {[]string{"register", "n1", "--ssh-key", "/nonexistent/key.pub"}, "--ssh-key"},
		"an abbreviated flag":    {[]string{"register", "n1", "--boot", "sda"}, "unknown flag: --boot"},
		"no name":                {[]string{"register"}, "usage: node-provisioner register"},
		"a negative ttl":         {[]string{"serve", "--ttl", "-1s"}, "--ttl"},
		"a zero ttl":             {[]string{"serve", "--ttl", "0s"}, "--ttl"},
		"a spaced kernel arg":    {[]string{"serve", "--kernel-arg", "console=ttyS0 quiet"}, "--kernel-arg"},
		"a bad domain":           {[]string{"serve", "--domain", "bad domain"}, "site settings"},
		"a bad country":          {[]string{"serve", "--country", "Atlantis"}, "site settings"},
		"an upper-case name":     {[]string{"register", "PVE1"}, "host name"},
		"an underscore name":     {[]string{"register", "pve_1"}, "host name"},
		"an unknown tls command": {[]string{"tls", "bogus"}, `unknown command "bogus" for "node-provisioner tls"`},
		"an unknown help topic":  {[]string{"help", "nosuch"}, `unknown help topic "nosuch"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			state := t.TempDir()
			r := np(t, state, tc.args...)
			if r.code != 2 || !strings.Contains(r.err, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 containing %q", r.code, r.err, tc.want)
			}
			if f := files(t, filepath.Join(state, "registrations")); len(f) != 0 {
				t.Errorf("files written: %v", f)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	r := np(t, t.TempDir(), "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "node-provisioner ") {
		t.Errorf("version: %d %q", r.code, r.stdout)
	}
	if f := np(t, t.TempDir(), "--version"); f.code != 0 || f.stdout != r.stdout {
		t.Errorf("--version: %d %q, want %q", f.code, f.stdout, r.stdout)
	}
}

func TestTLSFingerprintIsStable(t *testing.T) {
	state := t.TempDir()
	a, b := np(t, state, "tls", "fingerprint"), np(t, state, "tls", "fingerprint")
	if a.code != 0 || a.stdout != b.stdout || len(strings.TrimSpace(a.stdout)) != 95 {
		t.Errorf("fingerprints %q (exit %d, %s) and %q; want one stable AB:CD:... value", a.stdout, a.code, a.err, b.stdout)
	}
}

func TestPrepareStagesTheTestISO(t *testing.T) {
	state := t.TempDir()
	gz, err := os.ReadFile("../../pxe/bootassets/testdata/pve-tiny.iso.gz")
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	iso, _ := io.ReadAll(zr)
	isoPath := filepath.Join(t.TempDir(), "pve.iso")
	os.WriteFile(isoPath, iso, 0o644)
	r := np(t, state, "prepare", "--iso", isoPath)
	if r.code != 0 || !strings.Contains(r.stdout, "Staged 9.2-1") {
		t.Fatalf("prepare: %d %s %s", r.code, r.stdout, r.err)
	}
	for _, line := range []string{"preparing Proxmox VE 9.2-1 from pve.iso\n", "copy ISO: 100% (", "\nnode-provisioner: warning: the ISO has no /auto-installer-mode.toml", "\nprepared 9.2-1 in "} {
		if !strings.Contains(r.err, line) {
			t.Errorf("prepare's progress lacks %q:\n%s", line, r.err)
		}
	}
	if n := strings.Count(r.err+r.stdout, "auto-installer-mode.toml"); n != 1 {
		t.Errorf("prepare says its warning %d times, want once:\n%s%s", n, r.stdout, r.err)
	}
	for _, f := range []string{"linux26", "initrd-netboot.img", "manifest.json"} {
		if _, err := os.Stat(filepath.Join(state, "assets", "9.2-1", f)); err != nil {
			t.Errorf("missing asset: %v", err)
		}
	}
	// --cert-fingerprint auto makes the certificate naming the answer
	// URL's host (xorriso bakes the mode file).
	if _, err := exec.LookPath("xorriso"); err == nil {
		r := np(t, state, "prepare", "--iso", isoPath, "--answer-url", "https://10.1.2.3:8090/answer", "--cert-fingerprint", "auto")
		if r.code != 0 {
			t.Fatalf("prepare --cert-fingerprint auto: %d %s %s", r.code, r.stdout, r.err)
		}
		pemBytes, err := os.ReadFile(filepath.Join(state, "tls", "cert.pem"))
		if err != nil {
			t.Fatal(err)
		}
		block, _ := pem.Decode(pemBytes)
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		if err := cert.VerifyHostname("10.1.2.3"); err != nil {
			t.Errorf("the certificate prepare made does not name the answer URL's host: %v", err)
		}
	}
	if r := np(t, state, "prepare", "--iso", "main.go"); r.code != 2 || !strings.Contains(r.err, "not an auto-install capable Proxmox ISO") {
		t.Errorf("a non-ISO: exit %d %q, want 2", r.code, r.err)
	}
	if r := np(t, state, "prepare"); r.code != 2 || !strings.Contains(r.err, "--iso is required") {
		t.Errorf("no --iso: exit %d %q", r.code, r.err)
	}
}

// TestEveryCommandHasShortAndExample walks the whole command tree, help
// and completion included.
func TestEveryCommandHasShortAndExample(t *testing.T) {
	var out, errb bytes.Buffer
	root := newRoot(&app{out: &out, errw: &errb}, &out, &errb)
	if missing := cli.MissingHelp(root); len(missing) > 0 {
		t.Errorf("commands without help:\n%s", strings.Join(missing, "\n"))
	}
}

func TestCompletionAndJSONLogs(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		if r := np(t, t.TempDir(), "completion", sh); r.code != 0 || !strings.Contains(r.stdout, "node-provisioner") {
			t.Errorf("completion %s: exit %d, %d bytes, %s", sh, r.code, len(r.stdout), r.err)
		}
	}
	if r := np(t, t.TempDir(), "register", "pve1", "--mac", "52:54:00:de:ad:01", "--boot-disk", "sda"); r.code != 0 || strings.Contains(r.err, "level=INFO") {
		t.Errorf("register without -v: exit %d, stderr %q; want no INFO lines", r.code, r.err)
	}
	r := np(t, t.TempDir(), "--log-format", "json", "-v", "register", "pve1", "--mac", "52:54:00:de:ad:01", "--boot-disk", "sda")
	if r.code != 0 {
		t.Fatalf("register: %d %s", r.code, r.err)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(r.err), &rec); err != nil || rec["msg"] != "registration written" || rec["node"] != "pve1" {
		t.Errorf("--log-format json: %v: %q", err, r.err)
	}
}

// TestPlasmaNodeFindsThisStateFolder keeps plasma-node's default for a
// pxe platform's registrations where node-provisioner keeps them.
func TestPlasmaNodeFindsThisStateFolder(t *testing.T) {
	if DefaultStateDir != plasmanode.DefaultProvisionerDir || plasmanode.EnvProvisionerDir != "NODE_PROVISIONER_STATE_DIR" {
		t.Errorf("node-provisioner uses %s ($NODE_PROVISIONER_STATE_DIR), plasma-node looks in %s ($%s)", DefaultStateDir, plasmanode.DefaultProvisionerDir, plasmanode.EnvProvisionerDir)
	}
}

// TestValidateAnswer: validate-answer says what the installer of the
// version says (the cases are those of answer's parity tests, here through
// the command): the assistant's success line and exit 0, or the problems
// and exit 1; a bad --version is usage, exit 2.
func TestValidateAnswer(t *testing.T) {
	state := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(state, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	head := "[global]\nkeyboard = \"de\"\ncountry = \"at\"\nfqdn = \"node1.lab.example\"\nmailto = \"ops@lab.example\"\ntimezone = \"UTC\"\n"
	tail := "\n[network]\nsource = \"from-dhcp\"\n\n[disk-setup]\nfilesystem = \"zfs\"\nzfs.raid = \"RAIDZ-1\"\n"
	upper := write("upper.toml", head+"root-password = \"correct-horse\"\n"+tail+"disk-list = [\"sda\", \"sdb\", \"sdc\"]\n")
	snake := write("snake.toml", head+"root_password = \"correct-horse\"\n"+tail+"disk_list = [\"sda\", \"sdb\", \"sdc\"]\n")
	tests := map[string]struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		"upper-case RAID is fine for 8.4": {args: []string{upper, "--version", "8.4"}, code: 0,
			stdout: "The answer file was parsed successfully, no errors found! (installer 8.4)"},
		"the newest release by default":                  {args: []string{upper}, code: 0, stdout: "(installer 9.2)"},
		"snake_case keys: 8.4 reads them without a word": {args: []string{snake, "--version", "8.4"}, code: 0, stdout: "no errors found"},
		"snake_case keys: the 9.0 assistant warns": {args: []string{snake, "--version", "9.0"}, code: 1,
			stderr: "Warning: Section [global] contains deprecated key `root_password`, use `root-password` instead."},
		"kebab-case is unknown to 8.3": {args: []string{upper, "--version", "8.3.3"}, code: 1,
			stderr: "global.root-password needs installer 8.4 or later, not 8.3.3"},
		"8.3.2 refuses upper-case RAID": {args: []string{snake, "--version", "8.3.2"}, code: 1,
			stderr: `disk-setup.zfs.raid: "RAIDZ-1": write it in lower case`},
		"8.3.3 reads upper-case RAID": {args: []string{snake, "--version", "8.3.3"}, code: 0, stdout: "(installer 8.3.3)"},
		"a bad version is usage":      {args: []string{upper, "--version", "nine"}, code: 2, stderr: "--version"},
		"a version before 8.2":        {args: []string{upper, "--version", "8.1"}, code: 2, stderr: "no automated installer"},
		"a missing file is usage":     {args: []string{filepath.Join(state, "none.toml")}, code: 2, stderr: "none.toml"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := np(t, state, append([]string{"validate-answer"}, tc.args...)...)
			if r.code != tc.code || !strings.Contains(r.stdout, tc.stdout) || !strings.Contains(r.err, tc.stderr) {
				t.Errorf("exit %d (want %d)\nstdout: %s\nstderr: %s\nwant stdout %q, stderr %q", r.code, tc.code, r.stdout, r.err, tc.stdout, tc.stderr)
			}
		})
	}
}

// TestRegisterRefusesANumericName: every installer refuses a purely
// numeric host name (the Fqdn type, proxmox-network-types/src/fqdn.rs), so
// register refuses it as bad input, exit 2.
func TestRegisterRefusesANumericName(t *testing.T) {
	state := t.TempDir()
	r := np(t, state, "register", "123", "--mac", "aa:bb:cc:dd:ee:01", "--boot-disk", "sda")
	if r.code != 2 || !strings.Contains(r.err, "not digits only") {
		t.Fatalf("register 123: exit %d, %s", r.code, r.err)
	}
	if got := files(t, filepath.Join(state, "registrations")); len(got) != 0 {
		t.Errorf("files written: %v", got)
	}
	if r := np(t, state, "register", "n123", "--mac", "aa:bb:cc:dd:ee:01", "--boot-disk", "sda"); r.code != 0 {
		t.Errorf("register n123: exit %d, %s", r.code, r.err)
	}
}

// TestRegisterDuplicatePinsAndReplacement: a pin another pending
// registration holds is refused (exit 2, naming it) until --replace moves
// it; re-registering a name warns on stderr with what changed, so that a
// dropped --boot-disk is seen.
func TestRegisterDuplicatePinsAndReplacement(t *testing.T) {
	state := t.TempDir()
	if r := np(t, state, "register", "a1", "--mac", "52:54:00:00:00:01", "--boot-disk", "25414A800205"); r.code != 0 || strings.Contains(r.err, "warning") {
		t.Fatalf("register a1: %d %s", r.code, r.err)
	}
	for _, args := range [][]string{
		{"register", "a2", "--mac", "52-54-00-00-00-01", "--boot-disk", "sda"},
		{"register", "a2", "--serial", "SN-4711", "--mac", "52:54:00:00:00:01"},
	} {
		r := np(t, state, args...)
		if r.code != 2 || !strings.Contains(r.err, "already pinned by pending registration a1") || !strings.Contains(r.err, "--replace") {
			t.Errorf("%v: exit %d, %s; want 2 naming a1", args, r.code, r.err)
		}
	}
	if got := files(t, filepath.Join(state, "registrations")); !cmp.Equal(got, []string{"a1.json"}) {
		t.Errorf("files after the refusals: %v", got)
	}

	r := np(t, state, "register", "a1", "--mac", "52:54:00:00:00:02")
	want := "node-provisioner: warning: a1 was registered already and is replaced: macs 52:54:00:00:00:01 -> 52:54:00:00:00:02; boot disk 25414A800205 -> "
	if r.code != 0 || !strings.Contains(r.err, want) {
		t.Errorf("re-register: exit %d, stderr %q; want %q", r.code, r.err, want)
	}

	r = np(t, state, "register", "b1", "--mac", "52:54:00:00:00:02", "--boot-disk", "sda", "--replace")
	if r.code != 0 || !strings.Contains(r.err, "node-provisioner: warning: mac 52:54:00:00:00:02 moved from a1 to b1; a1 pinned nothing else and was removed") {
		t.Errorf("register --replace: exit %d, stderr %q", r.code, r.err)
	}
	if got := files(t, filepath.Join(state, "registrations")); !cmp.Equal(got, []string{"b1.json"}) {
		t.Errorf("files after the move: %v", got)
	}
}

// TestListShowsSharedPins: registration files written by hand that pin
// the same MAC are shown as such by list, on both.
func TestListShowsSharedPins(t *testing.T) {
	state := t.TempDir()
	dir := filepath.Join(state, "registrations")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a1", "a2"} {
		body := `{"name": "` + name + `", "macs": ["52:54:00:00:00:01"], "boot_disk": "sda"}`
		if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := np(t, state, "list")
	if r.code != 0 || strings.Count(r.stdout, "mac 52:54:00:00:00:01 is pinned by a1 and a2") != 2 {
		t.Errorf("list: exit %d\n%s%s", r.code, r.stdout, r.err)
	}
}
