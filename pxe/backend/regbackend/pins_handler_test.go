package regbackend_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// TestCollidingFilesRefuseTheMachine: two hand-written registrations
// pinning the same MAC make the machine's request a 409 naming both, and
// consume neither; status shows the shared pin on both.
func TestCollidingFilesRefuseTheMachine(t *testing.T) {
	e := newHandlerEnv(t)
	dir := filepath.Join(e.state, "registrations")
	write(t, filepath.Join(dir, "a1.json"), `{"name": "a1", "macs": ["52:54:00:00:00:01"], "boot_disk": "sda"}`)
	write(t, filepath.Join(dir, "a2.json"), `{"name": "a2", "macs": ["52:54:00:00:00:01"], "boot_disk": "sdb"}`)

	status, msg, _ := e.post(t, "", "application/json", body("9.2", "52:54:00:00:00:01"))
	if status != 409 || !strings.Contains(msg, "a1 and a2") || !strings.Contains(msg, "mac 52:54:00:00:00:01 is pinned by a1 and a2") {
		t.Errorf("answer = %d %q, want 409 naming a1 and a2", status, msg)
	}
	if d, err := e.b.Boot(context.Background(), "52:54:00:00:00:01"); err != nil || d.Node != "" || !strings.Contains(d.Reason, "a1 and a2") {
		t.Errorf("Boot = %+v, %v; want an exit naming a1 and a2", d, err)
	}
	if pending, _ := e.reg.Pending(context.Background()); len(pending) != 2 {
		t.Errorf("pending after the refusal: %d, want both", len(pending))
	}
	st, err := regbackend.Status(context.Background(), e.reg, folder.OpenEvents(folder.EventsPath(e.state), folder.EventsOptions{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range st {
		if !strings.Contains(n.Problem, "mac 52:54:00:00:00:01 is pinned by a1 and a2") {
			t.Errorf("status of %s: problem %q", n.Name, n.Problem)
		}
	}
}
