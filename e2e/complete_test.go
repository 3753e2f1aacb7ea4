package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNodeProvisionerCompletion: the shell asks node-provisioner
// (cobra's __complete) and gets the registrations' names for the
// commands taking one, the power actions and the -o values; a state
// folder that does not exist is not created by asking.
func TestNodeProvisionerCompletion(t *testing.T) {
	state := t.TempDir()
	complete := func(args ...string) []string {
		t.Helper()
		c := exec.Command(filepath.Join(bin, "node-provisioner"), append([]string{"__complete", "--state-dir", state}, args...)...)
		c.Env = append(os.Environ(), "HOME="+t.TempDir())
		out, err := c.Output()
		if err != nil {
			t.Fatalf("__complete %s: %v", strings.Join(args, " "), err)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if l != "" && !strings.HasPrefix(l, ":") {
				got = append(got, l)
			}
		}
		return got
	}
	missing := filepath.Join(state, "nowhere")
	if got := complete("unregister", "--state-dir", missing, ""); got != nil {
		t.Errorf("names of a missing state folder: %q", got)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("completion created the state folder")
	}
	for _, n := range []string{"pve2", "pve1"} {
		if out, code := provisioner(t, state, "register", n, "--mac", "52:54:00:de:ad:0"+n[3:], "--boot-disk", "sda"); code != 0 {
			t.Fatalf("register %s: %d %s", n, code, out)
		}
	}
	names := []string{"pve1", "pve2"}
	tests := map[string]struct {
		args []string
		want []string
	}{
		"unregister":        {[]string{"unregister", ""}, names},
		"rearm":             {[]string{"rearm", ""}, names},
		"boot":              {[]string{"boot", ""}, names},
		"register again":    {[]string{"register", ""}, names},
		"a power action":    {[]string{"power", ""}, []string{"status", "on", "off", "cycle"}},
		"power's machine":   {[]string{"power", "on", ""}, names},
		"nothing after":     {[]string{"unregister", "pve1", ""}, nil},
		"list -o":           {[]string{"list", "-o", ""}, []string{"table", "json", "yaml"}},
		"status --output":   {[]string{"status", "--output", ""}, []string{"table", "json", "yaml"}},
		"rearm, flag after": {[]string{"rearm", "--force", ""}, names},
	}
	for name, tc := range tests {
		if diff := cmp.Diff(tc.want, complete(tc.args...)); diff != "" {
			t.Errorf("%s: completions (-want +got):\n%s", name, diff)
		}
	}
}
