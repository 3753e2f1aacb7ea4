package daemon_test

import (
	"context"
	"errors"
	"testing"

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
	_, err = daemon.Via(dir, daemon.Record{PID: 42, Addr: ":8091"}, "", nil)
	var need *daemon.TokenNeededError
	if !errors.As(err, &need) || !errors.Is(err, registrar.ErrNoToken) || need.Daemon.PID != 42 {
		t.Errorf("a daemon without a token: %v", err)
	}
}
