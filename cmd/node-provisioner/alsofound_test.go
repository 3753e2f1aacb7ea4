package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerboseHelpNamesNoTofu: node-provisioner runs no tofu, so its -v
// help says only what -v does here.
func TestVerboseHelpNamesNoTofu(t *testing.T) {
	r := np(t, t.TempDir(), "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "--verbose") || strings.Contains(r.stdout, "tofu") {
		t.Errorf("--help: exit %d, want -v's help without tofu:\n%s", r.code, r.stdout)
	}
}

// TestListOfAMissingStateFolderSaysSo: a state folder that does not
// exist is named, exit 1, not read as "No registrations.".
func TestListOfAMissingStateFolderSaysSo(t *testing.T) {
	state := filepath.Join(t.TempDir(), "nosuch")
	r := np(t, state, "list")
	if r.code != 1 || !strings.Contains(r.err, state) || !strings.Contains(r.err, "does not exist") || strings.Contains(r.stdout, "No registrations") {
		t.Errorf("list of %s: exit %d, stdout %q, stderr %q; want 1 saying the folder does not exist", state, r.code, r.stdout, r.err)
	}
	if _, err := os.Stat(state); err == nil {
		t.Errorf("list made %s", state)
	}
}

// TestReinstallAndRearmSayWhatTheNameIs: an unknown name is "no
// registration named", a pending one "still pending, nothing to …".
func TestReinstallAndRearmSayWhatTheNameIs(t *testing.T) {
	state := t.TempDir()
	if r := np(t, state, "register", "a1", "--mac", "52:54:00:12:34:56"); r.code != 0 {
		t.Fatalf("register: %d %s", r.code, r.err)
	}
	tests := map[string]struct {
		args      []string
		want, not string
	}{
		"reinstall of an unknown name": {[]string{"reinstall", "nosuch", "--force"}, `no registration named "nosuch"`, "pending"},
		"rearm of an unknown name":     {[]string{"rearm", "nosuch"}, `no registration named "nosuch"`, "pending"},
		"rearm of a pending one":       {[]string{"rearm", "a1"}, "a1 is still pending", "consumed"},
		"reinstall of a pending one":   {[]string{"reinstall", "a1", "--force"}, "a1 is still pending", "consumed"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := np(t, state, tc.args...)
			if r.code == 0 || !strings.Contains(r.err, tc.want) || strings.Contains(r.err, tc.not) {
				t.Errorf("%v: exit %d, stderr %q; want a failure saying %q, not %q", tc.args, r.code, r.err, tc.want, tc.not)
			}
		})
	}
}

// TestUntrustedServerCertificateSaysHowToPinIt: --server of a daemon
// with its own certificate, without --fingerprint, says how to get the
// fingerprint and which flag takes it.
func TestUntrustedServerCertificateSaysHowToPinIt(t *testing.T) {
	ts := httptest.NewTLSServer(http.NotFoundHandler())
	defer ts.Close()
	t.Setenv("NODE_PROVISIONER_TOKEN", "npt_x")
	r := np(t, t.TempDir(), "--server", ts.URL, "list")
	if r.code != 1 || !strings.Contains(r.err, "--fingerprint") || !strings.Contains(r.err, "tls fingerprint") {
		t.Errorf("--server %s without --fingerprint: exit %d, stderr %q; want 1 with the hint", ts.URL, r.code, r.err)
	}
	if strings.Count(strings.TrimSpace(r.err), "\n") > 1 {
		t.Errorf("stderr %q: want the error and its hint, no more", r.err)
	}
}
