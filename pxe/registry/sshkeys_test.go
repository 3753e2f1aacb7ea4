package registry

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadSSHKeys(t *testing.T) {
	ed := sshKey("ssh-ed25519", "cicd@tappaas")
	rsa := sshKey("ssh-rsa", "")
	ecdsa := sshKey("ecdsa-sha2-nistp256", "ops")
	sk := sshKey("sk-ssh-ed25519@openssh.com", "yubikey")
	dir := t.TempDir()
	a := writeFile(t, dir, "a.pub", "# keys of the operators\n\n  "+ed+"  \n"+rsa+"\n")
	b := writeFile(t, dir, "b.pub", ecdsa+"\r\n"+sk+"\n"+ed+"\n")
	got, err := LoadSSHKeys([]string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{ed, rsa, ecdsa, sk}, got); diff != "" {
		t.Errorf("LoadSSHKeys (-want +got):\n%s", diff)
	}
	if got, err := LoadSSHKeys(nil); err != nil || len(got) != 0 {
		t.Errorf("LoadSSHKeys(nil) = %v, %v; want none", got, err)
	}
}

func TestLoadSSHKeysRefuses(t *testing.T) {
	ed := sshKey("ssh-ed25519", "")
	private := "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n"
	tests := map[string]struct {
		content  string
		wantText string
	}{
		"a private key names the file and line and is not quoted": {
			content: private, wantText: "line 1: invalid SSH public key: this is a private key; give the .pub file",
		},
		"an unknown key type": {
			content: ed + "\nssh-dss AAAAB3NzaC1kc3M= old\n", wantText: "line 2: invalid SSH public key: key type is not one of",
		},
		"authorized_keys options before the key": {
			content: `from="10.0.0.1" ` + ed + "\n", wantText: "line 1: invalid SSH public key: key type is not one of",
		},
		"a key that is not base64": {
			content: "ssh-ed25519 not-base64!\n", wantText: "line 1: invalid SSH public key: the key is not base64",
		},
		"a blob of another type": {
			content: "ssh-rsa " + strings.Fields(ed)[1] + "\n", wantText: "line 1: invalid SSH public key: the key blob does not start with its type ssh-rsa",
		},
		"a type without a key": {
			content: "ssh-ed25519\n", wantText: "line 1: invalid SSH public key: want TYPE BASE64",
		},
		"a file without keys": {
			content: "# nothing here\n\n", wantText: "invalid SSH public key: no key in the file",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := writeFile(t, t.TempDir(), "id.pub", tc.content)
			_, err := LoadSSHKeys([]string{f})
			if !errors.Is(err, ErrInvalidSSHKey) {
				t.Fatalf("LoadSSHKeys = %v, want ErrInvalidSSHKey", err)
			}
			if !strings.Contains(err.Error(), f) || !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("error %q lacks the file name or %q", err, tc.wantText)
			}
			if strings.Contains(err.Error(), "b3BlbnNzaC1rZXkt") || strings.Contains(err.Error(), "AAAA") {
				t.Errorf("the error quotes the file: %v", err)
			}
		})
	}
	if _, err := LoadSSHKeys([]string{filepath.Join(t.TempDir(), "missing.pub")}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file = %v, want os.ErrNotExist", err)
	}
}

func TestDefaultSSHKeyFiles(t *testing.T) {
	tests := map[string]struct {
		files []string
		want  []string
	}{
		"no keys give no files":        {},
		"only ed25519":                 {files: []string{"id_ed25519.pub"}, want: []string{"id_ed25519.pub"}},
		"both, ed25519 first":          {files: []string{"id_rsa.pub", "id_ed25519.pub"}, want: []string{"id_ed25519.pub", "id_rsa.pub"}},
		"other keys are not a default": {files: []string{"id_ecdsa.pub", "id_ed25519"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			for _, f := range tc.files {
				writeFile(t, home, filepath.Join(".ssh", f), sshKey("ssh-ed25519", "")+"\n")
			}
			var want []string
			for _, f := range tc.want {
				want = append(want, filepath.Join(home, ".ssh", f))
			}
			if diff := cmp.Diff(want, DefaultSSHKeyFiles(home)); diff != "" {
				t.Errorf("DefaultSSHKeyFiles (-want +got):\n%s", diff)
			}
		})
	}
}

// sshKey builds a syntactically real public key line of type typ.
func sshKey(typ, comment string) string {
	blob := binary.BigEndian.AppendUint32(nil, uint32(len(typ)))
	blob = append(blob, typ...)
	blob = binary.BigEndian.AppendUint32(blob, 32)
	blob = append(blob, make([]byte, 32)...)
	line := typ + " " + base64.StdEncoding.EncodeToString(blob)
	if comment != "" {
		line += " " + comment
	}
	return line
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
