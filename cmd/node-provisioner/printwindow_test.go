package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// TestPrintWindowOfTheSite: status prints the site's hosts under the
// window, and a site's window no process serves on this host as such.
func TestPrintWindowOfTheSite(t *testing.T) {
	now := time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)
	hosts := []window.Host{
		{Name: "prov1", API: "10.0.0.2:8091", HTTP: "10.0.0.2:8090", URL: "http://10.0.0.2:8090/answer", Serving: true, Seen: now.Add(-2 * time.Second)},
		{Name: "prov2", API: "10.0.0.3:8091", Seen: now.Add(-4 * time.Second)},
	}
	for name, tc := range map[string]struct {
		w    api.WindowStatus
		want string
	}{
		"served here": {
			w: api.WindowStatus{Open: true, Daemon: true, PID: 42, Deadline: now.Add(time.Hour), HTTP: "10.0.0.2:8090", URL: "http://10.0.0.2:8090/answer", OpenedBy: "prov1", Hosts: hosts},
			want: `Window:  open, 1h0m0s left (pid 42, daemon)
HTTP:    10.0.0.2:8090 (answers at http://10.0.0.2:8090/answer)
Host:    prov1, API 10.0.0.2:8091: serving, answers at http://10.0.0.2:8090/answer (seen 2s ago)
Host:    prov2, API 10.0.0.3:8091: not serving (seen 4s ago)
`,
		},
		"served by the site's other hosts": {
			w: api.WindowStatus{Open: true, Deadline: now.Add(time.Minute), OpenedBy: "prov1", Hosts: hosts[:1]},
			want: `Window:  open, 1m0s left (the site's, opened by prov1; not served on this host)
Host:    prov1, API 10.0.0.2:8091: serving, answers at http://10.0.0.2:8090/answer (seen 2s ago)
`,
		},
		"closed": {w: api.WindowStatus{}, want: "Window:  closed\n"},
	} {
		t.Run(name, func(t *testing.T) {
			var out strings.Builder
			a := &app{out: &out}
			a.printWindow(tc.w, now)
			if d := cmp.Diff(tc.want, out.String()); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestDaemonHostNameRefusals: a --host-name that is not a name is a
// usage error naming the flag, and no daemon starts.
func TestDaemonHostNameRefusals(t *testing.T) {
	dir := t.TempDir()
	for _, bad := range []string{"two words", "-dash", strings.Repeat("a", 64), "prov\n1", "prøv1"} {
		r := np(t, dir, "daemon", "--api", "127.0.0.1:0", "--http", "127.0.0.1:0", "--host-name", bad)
		if r.code != 2 || !strings.Contains(r.err, "--host-name") {
			t.Errorf("--host-name %q: exit %d %q; want 2 naming the flag", bad, r.code, r.err)
		}
	}
}
