package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneWarningPerEventInTheBinarysVoice: a re-registration and a
// moved pin are each said once, as "node-provisioner: warning: …" like
// the binary's errors, with no log line beside them; -v brings the log
// back.
func TestOneWarningPerEventInTheBinarysVoice(t *testing.T) {
	state := t.TempDir()
	if r := np(t, state, "register", "a1", "--mac", "52:54:00:00:00:01", "--boot-disk", "sda"); r.code != 0 {
		t.Fatal(r.err)
	}
	r := np(t, state, "register", "a1", "--mac", "52:54:00:00:00:02", "--boot-disk", "sda")
	want := "node-provisioner: warning: a1 was registered already and is replaced: macs 52:54:00:00:00:01 -> 52:54:00:00:00:02\n"
	if r.code != 0 || r.err != want {
		t.Errorf("re-register: exit %d, stderr %q; want exactly %q", r.code, r.err, want)
	}
	r = np(t, state, "register", "b1", "--mac", "52:54:00:00:00:02", "--boot-disk", "sda", "--replace")
	want = "node-provisioner: warning: mac 52:54:00:00:00:02 moved from a1 to b1; a1 pinned nothing else and was removed\n"
	if r.code != 0 || r.err != want {
		t.Errorf("register --replace: exit %d, stderr %q; want exactly %q", r.code, r.err, want)
	}
	r = np(t, state, "-v", "register", "b1", "--mac", "52:54:00:00:00:03", "--boot-disk", "sda")
	if r.code != 0 || !strings.Contains(r.err, "level=WARN") {
		t.Errorf("-v register: exit %d, stderr %q; want the log", r.code, r.err)
	}
}

// TestBadInputIsExit2: durations in plain seconds are taken (TAPPaaS's
// --ttl 7200) and another malformed one names the forms it takes; a
// malformed --http address is bad input, exit 2, before anything
// listens; an empty value (--boot-disk ”) is refused rather than read as
// the flag left out. Nothing is written.
func TestBadInputIsExit2(t *testing.T) {
	state := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--ttl", "7200", "--http", "nonsense"}, `--http "nonsense": invalid listen address: no port (want HOST:PORT`},
		{[]string{"serve", "--ttl", "2x"}, "want a duration with its unit, such as 2h, 30m or 90s, or a number of seconds such as 7200"},
		{[]string{"serve", "--http", "127.0.0.1:99999"}, "port \"99999\" is not a number from 0 to 65535"},
		{[]string{"register", "pve1", "--mac", "52:54:00:00:00:01", "--boot-disk", ""}, "--boot-disk: empty value"},
		{[]string{"register", "pve1", "--mac", "", "--boot-disk", "sda"}, "--mac: empty value"},
	} {
		r := np(t, state, tc.args...)
		if r.code != 2 || !strings.Contains(r.err, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 with %q", tc.args, r.code, r.err, tc.want)
		}
	}
	if got := files(t, state); len(got) != 0 {
		t.Errorf("bad input wrote %v", got)
	}
}

// TestReadCommandsCreateNothing: every read command (list, status, token
// list, power status, discovered; tls fingerprint, which makes the certificate it
// prints, excepted as docs/bare-metal.md says) on a state folder that does not
// exist makes none; power status and boot of a name there are not found
// (exit 2), as on a folder without that name.
func TestReadCommandsCreateNothing(t *testing.T) {
	root := t.TempDir()
	state := filepath.Join(root, "state")
	for _, args := range [][]string{{"list"}, {"list", "-o", "json"}, {"status"}, {"status", "-o", "json"}, {"token", "list"}, {"token", "list", "-o", "json"}, {"power", "status", "pve1"}, {"boot", "pve1"}, {"discovered"}, {"discovered", "-o", "json"}} {
		res := np(t, state, args...)
		if _, err := os.Lstat(state); err == nil {
			t.Fatalf("%v created the state folder: %v", args, files(t, root))
		}
		if args[0] == "power" || args[0] == "boot" {
			if res.code != 2 || !strings.Contains(res.err, `no pending registration named "pve1"`) {
				t.Errorf("%v on no state folder: exit %d %q, want 2, not found", args, res.code, res.err)
			}
		}
	}
}
