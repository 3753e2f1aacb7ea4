package regbackend_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// TestBrokenRegistrationBlocksTheUnpinnedFallback: a pinned registration
// whose file is malformed (or not a regular file) may be meant for the
// machine that asks, so it counts as pending: a stranger is not given the
// only unpinned registration, the refusal names the broken file and its
// line, and status lists it as broken. Before, the broken file was
// skipped and the stranger got the unpinned node's answer.
func TestBrokenRegistrationBlocksTheUnpinnedFallback(t *testing.T) {
	tests := map[string]struct {
		plant func(t *testing.T, path string)
		want  string
	}{
		"malformed JSON": {
			plant: func(t *testing.T, path string) {
				write(t, path, "{\n  \"name\": \"a1\",\n  \"macs\": [\"52:54:00:00:00:01\"\n  \"boot_disk\": \"sda\"\n}\n")
			},
			want: "a1.json line 4: ",
		},
		"a MAC of the wrong type": {
			plant: func(t *testing.T, path string) { write(t, path, "{\"name\": \"a1\",\n\"macs\": 5}\n") },
			want:  "a1.json line 2: ",
		},
		"a FIFO": {
			plant: func(t *testing.T, path string) {
				if err := syscall.Mkfifo(path, 0o600); err != nil {
					t.Fatal(err)
				}
			},
			want: "not a regular file (a FIFO)",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newHandlerEnv(t, mustReg(t, "b2", nil, "sda"))
			tc.plant(t, filepath.Join(e.state, "registrations", "a1.json"))
			stranger := "52:54:00:00:00:99"

			start := time.Now()
			status, msg, _ := e.post(t, "", "application/json", body("9.2", stranger))
			if time.Since(start) > 2*time.Second {
				t.Errorf("the answer took %v", time.Since(start))
			}
			if status != 409 || !strings.Contains(msg, tc.want) || !strings.Contains(msg, "block matching by elimination") {
				t.Errorf("stranger's answer = %d %q, want 409 naming %q", status, msg, tc.want)
			}
			if pending, _ := e.reg.Pending(context.Background()); len(pending) != 1 {
				t.Errorf("pending after the refusal: %v, want b2 still pending", pending)
			}
			d, err := e.b.Boot(context.Background(), stranger)
			if err != nil || d.Node != "" || !strings.Contains(d.Reason, tc.want) {
				t.Errorf("Boot = %+v, %v; want an exit naming %q", d, err, tc.want)
			}
			hw, _ := net.ParseMAC(stranger)
			if e.b.Allow(hw) {
				t.Error("Allow offered a boot file to a stranger while a broken registration blocks the fallback")
			}
			st, err := regbackend.Status(context.Background(), e.reg, folder.OpenEvents(folder.EventsPath(e.state), folder.EventsOptions{}), nil)
			if err != nil {
				t.Fatal(err)
			}
			var states []string
			for _, n := range st {
				states = append(states, n.Name+" "+n.State)
				if n.State == backend.StateBroken && !strings.Contains(n.Problem, tc.want) {
					t.Errorf("broken node's problem %q lacks %q", n.Problem, tc.want)
				}
			}
			if diff := cmp.Diff([]string{"b2 pending", "a1 broken"}, states); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
