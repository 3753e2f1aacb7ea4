package enrol_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/enrol"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

type secrets map[string]string

func (s secrets) ReadSiteSecret(_ context.Context, name string) (string, error) {
	if v, ok := s[name]; ok {
		return v, nil
	}
	return "", fmt.Errorf("site secret %s: %w", name, fs.ErrNotExist)
}

// enroller returns an Enroller over a new state folder with rules, and
// what it registered (name and BMC password).
func enroller(t *testing.T, rules ...enrol.Rule) (*enrol.Enroller, *folder.Registrations, events.Store) {
	t.Helper()
	dir := t.TempDir()
	regs, err := folder.OpenRegistrations(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := folder.OpenRules(dir)
	if _, err := st.Update(context.Background(), func(enrol.State) (enrol.State, error) { return state(t, rules...), nil }); err != nil {
		t.Fatal(err)
	}
	evs := folder.OpenEvents(folder.EventsPath(dir), folder.EventsOptions{})
	e := &enrol.Enroller{Rules: st, Registrations: regs, Events: evs, Now: func() time.Time { return now },
		Register: func(ctx context.Context, r registry.Registration) error {
			_, err := regs.Register(ctx, r, registry.RegisterOptions{})
			return err
		}}
	return e, regs, evs
}

func TestEnrolRegistersRecordsAndCounts(t *testing.T) {
	ctx := context.Background()
	e, regs, evs := enroller(t, ssdBoot, anyQEMU)
	rec := machine(1, disk("sda", "SSD-1", 240e9, false))
	d, err := e.Enrol(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := regs.Get(ctx, "pve-01")
	if err != nil || got.BootDisk.Value != "SSD-1" || got.Network == nil || got.Network.CIDR != "10.0.0.100/24" {
		t.Errorf("registration pve-01 = %+v, %v; want boot disk SSD-1 and 10.0.0.100/24", got, err)
	}
	if d.Rule != "ssd-boot" || d.Name != "pve-01" {
		t.Errorf("decision %+v", d)
	}
	// The same machine again: registered already, nothing written.
	if _, err := e.Enrol(ctx, rec); !errors.Is(err, enrol.ErrRegistered) {
		t.Errorf("a second report of an enrolled machine = %v, want ErrRegistered", err)
	}
	// A machine no rule takes.
	none := machine(2, disk("sda", "S2", 120e9, false))
	none.DMI.Vendor = "Dell Inc."
	if _, err := e.Enrol(ctx, none); !errors.Is(err, enrol.ErrNoRule) {
		t.Errorf("a machine no rule takes = %v, want ErrNoRule", err)
	}
	st, _ := e.Rules.Read(ctx)
	if c := st.Counters["ssd-boot"]; c.Enrolled != 1 || len(st.Held) != 1 {
		t.Errorf("after one enrolment: counter %+v, holds %v; want 1 enrolled, its hold kept", c, st.Held)
	}
	recs, err := evs.Read(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range recs {
		lines = append(lines, string(r.Event.Kind)+" "+r.Event.Node+" "+r.Event.Detail)
	}
	want := []string{
		"enrolled pve-01 enrolled by rule ssd-boot (register)",
		"unenrolled  enrolment refused: the machine is registered already as pve-01",
		`unenrolled  no enrolment rule matches the machine: disk sda: size 120 GB below 200 GB of rule ssd-boot; DMI vendor "Dell Inc." does not match "qemu" of rule qemu`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

func TestEnrolFailsClosed(t *testing.T) {
	ctx := context.Background()
	t.Run("a registration that cannot be written takes the count back", func(t *testing.T) {
		e, regs, _ := enroller(t, ssdBoot)
		e.Register = func(context.Context, registry.Registration) error { return errors.New("disk full") }
		if _, err := e.Enrol(ctx, machine(1, disk("sda", "S", 240e9, false))); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("Enrol = %v, want the write's error", err)
		}
		st, _ := e.Rules.Read(ctx)
		if c := st.Counters["ssd-boot"]; c.Enrolled != 0 || len(st.Held) != 0 {
			t.Errorf("after a failed write: counter %+v, holds %v; want none enrolled, no hold", c, st.Held)
		}
		if p, _ := registry.Pending(ctx, regs); len(p) != 0 {
			t.Errorf("a failed enrolment left %d registrations", len(p))
		}
	})
	t.Run("a BMC names the rule's site secret, resolved at use; a missing one writes nothing", func(t *testing.T) {
		r := anyQEMU
		r.BMC = &enrol.BMC{Scheme: "ipmi", User: "admin", Secret: "bmc-rack1"}
		e, regs, _ := enroller(t, r)
		rec := machine(3, disk("sda", "S", 240e9, false))
		if _, err := e.Enrol(ctx, rec); !errors.Is(err, enrol.ErrNoRule) || !strings.Contains(err.Error(), "no BMC address") {
			t.Errorf("a BMC rule on a report without a BMC address = %v, want ErrNoRule saying so", err)
		}
		rec.BMCAddress = "192.0.2.33"
		if _, err := e.Enrol(ctx, rec); err == nil || !strings.Contains(err.Error(), "site secret bmc-rack1") {
			t.Errorf("a BMC rule without its secret = %v, want an error naming the secret", err)
		}
		e.Secrets = secrets{"bmc-rack1": "s3cret"}
		if _, err := e.Enrol(ctx, rec); err != nil {
			t.Fatal(err)
		}
		got, _ := regs.Get(ctx, "vm-srv-3")
		want := &registry.BMC{URL: "ipmi://192.0.2.33", User: "admin", Secret: "bmc-rack1"}
		if d := cmp.Diff(want, got.BMC); d != "" {
			t.Errorf("registration BMC (-want +got):\n%s", d)
		}
	})
}
