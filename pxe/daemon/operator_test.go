package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/plasmactl/plasma-node/internal/lockfile"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/daemon"
	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// TestOperatorOf: the API's client is operated remotely, a state folder
// locally; a folder without registrations is not created to look for a
// machine, and a daemon on the folder without a token names itself.
func TestOperatorOf(t *testing.T) {
	c, err := client.New(client.Options{URL: "https://127.0.0.1:1", Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir() + "/state"
	for name, tc := range map[string]struct {
		r     registrar.Registrar
		local bool
	}{
		"the API's client is remote": {r: c},
		"a state folder is local":    {r: &registrar.Local{Dir: dir}, local: true},
	} {
		t.Run(name, func(t *testing.T) {
			op, err := daemon.OperatorOf(tc.r)
			if err != nil {
				t.Fatal(err)
			}
			if _, local := op.(daemon.Local); local != tc.local {
				t.Errorf("%T: local %v, want %v", op, local, tc.local)
			}
		})
	}
	op, _ := daemon.OperatorOf(&registrar.Local{Dir: dir})
	if _, err := op.Power(context.Background(), "pve1", "status"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("power of a folder without registrations: %v", err)
	}
	if ok, _ := (&registrar.Local{Dir: dir}).Exists(); ok {
		t.Error("power created the state folder")
	}
	if got, r, err := daemon.Via(op, "", true, nil); got != op || r != nil || err != nil {
		t.Errorf("no daemon: %v, %v, %v; want the folder's own operator", got, r, err)
	}
	// A daemon (this process, holding the daemon lock) runs on the folder.
	api := filepath.Join(dir, apitoken.DirName)
	if err := os.MkdirAll(api, 0o700); err != nil {
		t.Fatal(err)
	}
	lock, err := lockfile.TryLock(filepath.Join(api, daemon.RunningLockName), "test daemon")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	rec := fmt.Sprintf(`{"pid": %d, "addr": ":8091"}`, os.Getpid())
	if err := os.WriteFile(filepath.Join(api, daemon.RunningName), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, r, err := daemon.Via(op, "", false, nil); got != op || r == nil || r.PID != os.Getpid() || err != nil {
		t.Errorf("a daemon, no token wanted: %v, %v, %v; want the folder's own operator and the daemon", got, r, err)
	}
	_, _, err = daemon.Via(op, "", true, nil)
	var need *daemon.TokenNeededError
	if !errors.As(err, &need) || !errors.Is(err, registrar.ErrNoToken) || need.Daemon.PID != os.Getpid() {
		t.Errorf("a daemon without a token: %v", err)
	}
}
