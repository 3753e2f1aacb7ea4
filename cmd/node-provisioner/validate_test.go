package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
	jsonAnswer := `{"global":{"keyboard":"de","country":"at","fqdn":"node1.lab.example","mailto":"ops@lab.example","timezone":"UTC",
"root-password":"correct-horse"},"network":{"source":"from-dhcp"},"disk-setup":{"filesystem":"ext4","disk-list":["sda"]}}`
	// The format is told by content, whatever the file's name.
	asJSON := write("answer.toml", jsonAnswer)
	badJSON := write("bad.json", strings.Replace(jsonAnswer, `"disk-list"`, `"disk-lits"`, 1))
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
		"8.3.3 reads upper-case RAID":                {args: []string{snake, "--version", "8.3.3"}, code: 0, stdout: "(installer 8.3.3)"},
		"a bad version is usage":                     {args: []string{upper, "--version", "nine"}, code: 2, stderr: "--version"},
		"a version before 8.2":                       {args: []string{upper, "--version", "8.1"}, code: 2, stderr: "no automated installer"},
		"a JSON answer is read by content":           {args: []string{asJSON}, code: 0, stdout: "no errors found! (installer 9.2, JSON)"},
		"a JSON answer is checked by the same rules": {args: []string{badJSON}, code: 1, stderr: "disk-setup.disk-lits: unknown key"},
		"a JSON answer for 9.1, which reads TOML only": {args: []string{asJSON, "--version", "9.1"}, code: 1,
			stderr: "JSON answers need installer 9.2 or later"},
		"a missing file is usage": {args: []string{filepath.Join(state, "none.toml")}, code: 2, stderr: "none.toml"},
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
