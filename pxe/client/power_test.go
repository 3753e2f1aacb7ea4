package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/apitype"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
	"github.com/plasmactl/plasma-node/pxe/tlscert"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// failingBMC is an [api.Power] whose BMC refuses the credentials.
type failingBMC struct{ calls atomic.Int32 }

func (f *failingBMC) Power(context.Context, string, string) (string, error) {
	f.calls.Add(1)
	return "", fmt.Errorf("%w: pve1: power status: BMC refused the credentials", api.ErrBMCFailed)
}

func (f *failingBMC) Boot(context.Context, string) (api.BootReply, error) {
	f.calls.Add(1)
	return api.BootReply{}, fmt.Errorf("%w: pve1: BMC refused the credentials", api.ErrBMCFailed)
}

func (f *failingBMC) SetPassword(string, string) error { return nil }

// TestBMCFailureIsNotRetried: a 502 carrying the BMC's words is the
// BMC's answer (the server retried the BMC already), so even a status
// read is sent once, and the error says it in the BMC's words.
func TestBMCFailureIsNotRetried(t *testing.T) {
	c, _, bmc := powerServer(t)
	var err error
	for _, action := range []string{"status", "on", "boot"} {
		before := bmc.calls.Load()
		if action == "boot" {
			_, err = c.Boot(context.Background(), "pve1")
		} else {
			_, err = c.Power(context.Background(), "pve1", action)
		}
		if !errors.Is(err, api.ErrBMCFailed) || errors.Is(err, api.ErrPowerRefused) {
			t.Errorf("%s: %v; want ErrBMCFailed", action, err)
		}
		if err != nil && !strings.Contains(err.Error(), "BMC refused the credentials") {
			t.Errorf("%s: %v; want the BMC's words", action, err)
		}
		if n := bmc.calls.Load() - before; n != 1 {
			t.Errorf("%s: the BMC was asked %d times; want once", action, n)
		}
	}
}

// powerServer serves the API over a fresh state folder with bmc as its
// power control, and returns a client with a register token.
func powerServer(t *testing.T) (*client.Client, registry.Registrations, *failingBMC) {
	t.Helper()
	state := t.TempDir()
	reg, err := folder.OpenRegistrations(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	store, _ := folder.OpenTokens(state, nil)
	tok, err := store.Create(context.Background(), "ci", apitoken.ScopeRegister, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	replies, err := folder.OpenReplies(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := folder.OpenSecrets(filepath.Join(state, "secrets"))
	if err != nil {
		t.Fatal(err)
	}
	bmc := &failingBMC{}
	h, err := api.New(api.Config{Window: folder.Window(state), Registry: reg, Tokens: store, Replies: replies, Power: bmc, Secrets: secrets,
		Events: folder.OpenEvents(folder.EventsPath(state), folder.EventsOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewTLSServer(h)
	t.Cleanup(ts.Close)
	c, err := client.New(client.Options{URL: ts.URL, Token: tok, Fingerprint: tlscert.Fingerprint(ts.Certificate().Raw), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c, reg, bmc
}

// TestAReinstallWhileClosedIsWindowClosed: the server's refusal of a
// reinstall while the window is closed (409) matches window.ErrClosed,
// as a reinstall on the state folder does, and an unknown name matches
// registry.ErrNotFound and not it.
func TestAReinstallWhileClosedIsWindowClosed(t *testing.T) {
	c, reg, bmc := powerServer(t)
	ctx := context.Background()
	pve1 := registry.Registration{Name: "pve1", MACs: []string{"52:54:00:00:00:01"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskAny},
		BMC: &registry.BMC{URL: "ipmi://192.0.2.10", User: "admin"}}
	if _, err := reg.Register(ctx, pve1, registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Consume(ctx, "pve1", registry.ConsumeRecord{Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Reinstall(ctx, "pve1", apitype.ReinstallRequest{})
	if !errors.Is(err, window.ErrClosed) || !errors.Is(err, apitype.ErrPowerRefused) || errors.Is(err, registry.ErrNotFound) {
		t.Errorf("reinstall with the window closed: %v; want window.ErrClosed", err)
	}
	_, err = c.Reinstall(ctx, "nosuch", apitype.ReinstallRequest{})
	if !errors.Is(err, registry.ErrNotFound) || errors.Is(err, window.ErrClosed) {
		t.Errorf("reinstall of an unknown name: %v; want registry.ErrNotFound alone", err)
	}
	if n := bmc.calls.Load(); n != 0 {
		t.Errorf("the BMC was asked %d times; want never", n)
	}
}
