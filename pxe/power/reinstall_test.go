package power_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/internal/bmctest"
	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	"github.com/plasmactl/plasma-node/pxe/bmc"
	"github.com/plasmactl/plasma-node/pxe/power"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// TestReinstall: a consumed registration is re-armed, and one with a BMC
// is booted only while the window is open; a closed window writes
// nothing, and a boot that fails leaves it re-armed.
func TestReinstall(t *testing.T) {
	bmctest.Need(t)
	hook := bmctest.StateHook(t)
	sim := bmctest.Start(t, hook, "admin", "pw-123")
	for name, tc := range map[string]struct {
		bmc      bool
		password string
		open     bool
		consume  bool
		want     *power.BootResult
		wantErr  error
		pending  bool
	}{
		"an unknown name is not found":                          {wantErr: registry.ErrNotFound},
		"a machine without a BMC is re-armed, for its operator": {consume: true, pending: true},
		"a closed window re-arms nothing":                       {bmc: true, password: "pw-123", consume: true, wantErr: window.ErrClosed},
		"an open window re-arms and boots":                      {bmc: true, password: "pw-123", consume: true, open: true, pending: true, want: &power.BootResult{Protocol: "ipmi", Mode: bmc.BootUEFI, Was: bmc.PowerOff, Device: power.DevicePXE}},
		"a failed boot leaves it re-armed":                      {bmc: true, password: "wrong", consume: true, open: true, pending: true, wantErr: bmc.ErrAuthRefused},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			state, secrets := t.TempDir(), filepath.Join(t.TempDir(), "secrets")
			var b *registry.BMC
			if tc.bmc {
				b = &registry.BMC{URL: sim.Endpoint(), User: "admin"}
			}
			register(t, state, secrets, b, tc.password)
			regs, err := folder.OpenRegistrations(state, nil)
			if err != nil {
				t.Fatal(err)
			}
			sec, err := folder.OpenSecrets(secrets)
			if err != nil {
				t.Fatal(err)
			}
			if tc.consume {
				if _, err := regs.Consume(ctx, "n1", registry.ConsumeRecord{Time: time.Now()}); err != nil {
					t.Fatal(err)
				}
			} else if err := regs.Delete(ctx, "n1"); err != nil {
				t.Fatal(err)
			}
			if tc.open {
				if err := window.Write(state, &window.Record{PID: os.Getpid(), Started: time.Now(), Deadline: time.Now().Add(time.Hour)}); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(filepath.Dir(hook), "power"), []byte("0\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := power.Reinstall(ctx, power.Request{Registrations: regs, Secrets: sec, Window: folder.Window(state), Name: "n1"}, false)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			var bf *regbackend.BootFailedError
			if errors.As(err, &bf) != (tc.wantErr == bmc.ErrAuthRefused) {
				t.Errorf("err %v: a BootFailedError only for a failed boot", err)
			}
			if err == nil {
				if d := cmp.Diff(tc.want, got); d != "" {
					t.Errorf("result (-want +got):\n%s", d)
				}
			}
			_, gerr := regs.Get(ctx, "n1")
			if pending := gerr == nil; pending != tc.pending {
				t.Errorf("pending %v, want %v (%v)", pending, tc.pending, gerr)
			}
		})
	}
}
