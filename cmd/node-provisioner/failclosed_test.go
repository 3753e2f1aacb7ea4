package main

import (
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
