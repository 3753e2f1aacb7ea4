package bmc_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/fakeredfish"
	"github.com/plasmactl/plasma-node/pxe/bmc"
)

// TestRedfishFollowsATaskMonitor: a BMC that answers a reset with 202 and
// a task monitor (DSP0266 "Asynchronous operations") is followed until
// the task is done: power on returns with the machine on, after the
// monitor said Running three times; a task ending in Exception is the
// BMC's refusal, in its words; a task that never ends is not taken as
// done.
func TestRedfishFollowsATaskMonitor(t *testing.T) {
	ctx := context.Background()
	fake, c := redfishLab(t, fakeredfish.Config{TaskPolls: 3}, "", "", bmc.Options{})
	if err := c.PowerOn(ctx); err != nil {
		t.Fatal(err)
	}
	if p, err := c.PowerStatus(ctx); err != nil || p != bmc.PowerOn {
		t.Errorf("power %v (%v) once power on returned, want on: the task was taken as done", p, err)
	}
	polls := 0
	for _, call := range fake.Calls() {
		if strings.Contains(call, "/Monitor") {
			polls++
		}
	}
	if polls != 4 {
		t.Errorf("the task monitor was asked %d times, want 4 (3 running, then done): %v", polls, fake.Calls())
	}

	_, c = redfishLab(t, fakeredfish.Config{TaskPolls: 1, TaskFails: "PSU fault"}, "", "", bmc.Options{})
	err := c.PowerOn(ctx)
	if !errors.Is(err, bmc.ErrBMC) || !strings.Contains(err.Error(), "task ended Exception: PSU fault") {
		t.Errorf("a failed task: %v, want the BMC's words", err)
	}
	if p, _ := c.PowerStatus(ctx); p != bmc.PowerOff {
		t.Errorf("power %v after a failed task, want off", p)
	}

	_, c = redfishLab(t, fakeredfish.Config{TaskPolls: 1 << 20}, "", "", bmc.Options{})
	short, cancel := context.WithTimeout(ctx, 700*time.Millisecond)
	defer cancel()
	if err := c.PowerOn(short); err == nil {
		t.Error("a task that never ends was taken as done")
	}
}

// TestRedfishFollowsAPATCHsTaskMonitor: a BMC that answers the PATCH of
// the one-time boot override with 202 and a task monitor is followed
// until the task is done: SetNextBootPXE returns with the override set,
// after the monitor said Running twice; a PATCH task ending in Exception
// is the BMC's refusal, in its words, the override not set.
func TestRedfishFollowsAPATCHsTaskMonitor(t *testing.T) {
	ctx := context.Background()
	fake, c := redfishLab(t, fakeredfish.Config{PatchTaskPolls: 2}, "", "", bmc.Options{})
	if err := c.SetNextBootPXE(ctx, bmc.BootUEFI); err != nil {
		t.Fatal(err)
	}
	if enabled, target, mode := fake.Override(); enabled != "Once" || target != "Pxe" || mode != "UEFI" {
		t.Errorf("override %s %s %s once SetNextBootPXE returned, want Once Pxe UEFI: the task was taken as done", enabled, target, mode)
	}
	polls := 0
	for _, call := range fake.Calls() {
		if strings.Contains(call, "/Monitor") {
			polls++
		}
	}
	if polls != 3 {
		t.Errorf("the task monitor was asked %d times, want 3 (2 running, then done): %v", polls, fake.Calls())
	}

	fake, c = redfishLab(t, fakeredfish.Config{PatchTaskPolls: 1, TaskFails: "boot order locked"}, "", "", bmc.Options{})
	err := c.SetNextBootPXE(ctx, bmc.BootUEFI)
	if !errors.Is(err, bmc.ErrBMC) || !strings.Contains(err.Error(), "task ended Exception: boot order locked") {
		t.Errorf("a failed PATCH task: %v, want the BMC's words", err)
	}
	if enabled, target, _ := fake.Override(); enabled != "Disabled" || target != "None" {
		t.Errorf("override %s %s after a failed task, want none", enabled, target)
	}
}
