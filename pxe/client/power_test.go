package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
	"github.com/plasmactl/plasma-node/pxe/tlscert"
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
	bmc := &failingBMC{}
	replies, err := folder.OpenReplies(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := api.New(api.Config{Window: folder.Window(state), Registry: reg, Tokens: store, Replies: replies, Power: bmc, Events: folder.OpenEvents(folder.EventsPath(state), folder.EventsOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewTLSServer(h)
	defer ts.Close()
	c, err := client.New(client.Options{URL: ts.URL, Token: tok, Fingerprint: tlscert.Fingerprint(ts.Certificate().Raw), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
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
