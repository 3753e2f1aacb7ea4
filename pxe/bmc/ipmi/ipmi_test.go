package ipmi_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/bmctest"
	"github.com/plasmactl/plasma-node/pxe/bmc"
	"github.com/plasmactl/plasma-node/pxe/bmc/ipmi"
)

func openIPMI(t *testing.T, endpoint, user, pw string, o bmc.Options) bmc.Controller {
	t.Helper()
	e, err := bmc.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ipmi.New(e, bmc.Credentials{User: user, Password: pw}, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// TestIPMIAgainstIPMISim drives every verb through a real ipmi_sim and
// cross-checks each result with ipmitool and the hook's record.
func TestIPMIAgainstIPMISim(t *testing.T) {
	hook := bmctest.StateHook(t)
	sim := bmctest.Start(t, hook, "admin", "s3cret-pw")
	ctx := context.Background()
	c := openIPMI(t, sim.Endpoint(), "admin", "s3cret-pw", bmc.Options{})
	if c.Protocol() != "ipmi" {
		t.Errorf("protocol %q", c.Protocol())
	}
	wantPower := func(want bmc.Power, tool string) {
		t.Helper()
		p, err := c.PowerStatus(ctx)
		if err != nil || p != want {
			t.Fatalf("power status: %v %v; want %s", p, err, want)
		}
		out, err := sim.IPMItool(ctx, "chassis", "power", "status")
		if err != nil || !strings.Contains(out, "Chassis Power is "+tool) {
			t.Errorf("ipmitool power status: %q %v; want %s", out, err, tool)
		}
	}
	wantPower(bmc.PowerOff, "off")

	start := time.Now()
	if err := c.SetNextBootPXE(ctx, bmc.BootLegacy); err != nil {
		t.Fatal(err)
	}
	t.Logf("set next boot PXE took %s", time.Since(start))
	if got := bmctest.Read(hook, "boot"); got != "pxe" {
		t.Errorf("hook boot device %q; want pxe", got)
	}
	if out, err := sim.IPMItool(ctx, "chassis", "bootparam", "get", "5"); err != nil || !strings.Contains(out, "Force PXE") {
		t.Errorf("ipmitool bootparam get 5: %q %v; want Force PXE", out, err)
	}
	start = time.Now()
	if err := c.PowerOn(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("power on took %s", time.Since(start))
	wantPower(bmc.PowerOn, "on")
	if got := bmctest.Read(hook, "boots"); got != "pxe" {
		t.Errorf("boots %q; want one PXE boot", got)
	}
	if err := c.PowerOn(ctx); err != nil { // already on: stays on, no new boot
		t.Fatal(err)
	}
	if err := c.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if got := bmctest.Read(hook, "boots"); got != "pxe\nnone" {
		t.Errorf("boots after reset %q; want pxe then none (the override was once)", got)
	}
	if strings.Contains(bmctest.Read(hook, "hook.log"), "set power 0") {
		t.Errorf("something powered the machine off unasked:\n%s", bmctest.Read(hook, "hook.log"))
	}
	if err := c.PowerCycle(ctx); err != nil {
		t.Fatal(err)
	}
	// ipmi_sim powers a cycled machine on at its next 1 s tick.
	end := time.Now().Add(5 * time.Second)
	for bmctest.Read(hook, "boots") != "pxe\nnone\nnone" && time.Now().Before(end) {
		time.Sleep(100 * time.Millisecond)
	}
	if got := bmctest.Read(hook, "boots"); got != "pxe\nnone\nnone" {
		t.Errorf("boots after cycle %q", got)
	}
	if err := c.PowerOff(ctx); err != nil {
		t.Fatal(err)
	}
	wantPower(bmc.PowerOff, "off")
}

func TestIPMIRefusals(t *testing.T) {
	hook := bmctest.StateHook(t)
	sim := bmctest.Start(t, hook, "admin", "s3cret-pw")
	ctx := context.Background()

	t.Run("WrongPassword", func(t *testing.T) {
		c := openIPMI(t, sim.Endpoint(), "admin", "wrong-password", bmc.Options{})
		start := time.Now()
		_, err := c.PowerStatus(ctx)
		if !errors.Is(err, bmc.ErrAuthRefused) {
			t.Fatalf("err %v; want ErrAuthRefused", err)
		}
		if strings.Contains(err.Error(), "wrong-password") {
			t.Errorf("the error carries the password: %v", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("a refused password took %s (retried?)", d)
		}
		t.Logf("%v (%s)", err, time.Since(start))
	})
	t.Run("UnknownUser", func(t *testing.T) {
		c := openIPMI(t, sim.Endpoint(), "nobody", "s3cret-pw", bmc.Options{})
		if _, err := c.PowerStatus(ctx); !errors.Is(err, bmc.ErrAuthRefused) {
			t.Fatalf("err %v; want ErrAuthRefused", err)
		}
	})
	t.Run("Unreachable", func(t *testing.T) {
		port := bmctest.FreeUDPPort(t)
		c := openIPMI(t, fmt.Sprintf("ipmi://127.0.0.1:%d", port), "admin", "x", bmc.Options{})
		start := time.Now()
		err := c.PowerOn(ctx)
		if !errors.Is(err, bmc.ErrUnreachable) {
			t.Fatalf("err %v; want ErrUnreachable", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("an absent BMC took %s", d)
		}
		t.Logf("%v (%s)", err, time.Since(start))
	})
	t.Run("CipherSuiteZero", func(t *testing.T) {
		if _, err := bmc.ParseCipherSuite("0"); !errors.Is(err, bmc.ErrInvalidEndpoint) || !strings.Contains(err.Error(), "no authentication") {
			t.Errorf("suite 0: %v", err)
		}
		if n, err := bmc.ParseCipherSuite("17"); err != nil || n != 17 {
			t.Errorf("suite 17: %d %v", n, err)
		}
		if err := bmc.ValidateIPMI(3, "user"); !errors.Is(err, bmc.ErrInvalidEndpoint) {
			t.Errorf("privilege user: %v", err)
		}
	})
	if strings.Contains(bmctest.Read(hook, "hook.log"), "set power") {
		t.Errorf("a refused call reached the chassis:\n%s", bmctest.Read(hook, "hook.log"))
	}
}
