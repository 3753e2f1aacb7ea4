package api_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// TestReinstall: POST /registrations/{name}/reinstall re-arms an installed
// registration and boots it through its BMC; a closed window refuses one
// with a BMC before anything changes, and a pending or unknown name is
// 404.
func TestReinstall(t *testing.T) {
	fp := &fakePower{}
	secrets := &fakeSecrets{passwords: map[string]string{}}
	var regs registry.Registrations
	e := newEnv(t, func(c *api.Config) { c.Power, c.Secrets, regs = fp, secrets, c.Registry })
	ctx := context.Background()
	disk := answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}
	for _, r := range []registry.Registration{
		{Name: "pve1", MACs: []string{"52:54:00:00:00:01"}, BootDisk: disk, BMC: &registry.BMC{URL: "ipmi://192.0.2.10", User: "admin"}},
		{Name: "pve2", MACs: []string{"52:54:00:00:00:02"}, BootDisk: disk},
		{Name: "pve3", MACs: []string{"52:54:00:00:00:03"}, BootDisk: disk},
	} {
		if _, err := regs.Register(ctx, r, registry.RegisterOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"pve1", "pve2"} {
		if _, err := regs.Consume(ctx, n, registry.ConsumeRecord{Time: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	tok := e.tokens["register"]
	steps := []struct {
		name, path, token string
		open              bool
		status            int
		has               string
	}{
		{"a read token", "/api/v1/registrations/pve1/reinstall", e.tokens["read"], false, 403, "needs register"},
		{"with a BMC, the window closed", "/api/v1/registrations/pve1/reinstall", tok, false, 409, "window is closed"},
		{"a pending one", "/api/v1/registrations/pve3/reinstall", tok, false, 404, "pve3 is still pending"},
		{"an unknown one", "/api/v1/registrations/nosuch/reinstall", tok, false, 404, `no registration named`},
		{"a bad name", "/api/v1/registrations/a.b/reinstall", tok, false, 400, "name"},
		{"without a BMC", "/api/v1/registrations/pve2/reinstall", tok, false, 200, `{"name":"pve2","boot":null}`},
		{"with a BMC, the window open", "/api/v1/registrations/pve1/reinstall", tok, true, 200, `"boot":{"protocol":"ipmi"`},
		{"again, now pending", "/api/v1/registrations/pve1/reinstall", tok, true, 404, "pve1 is still pending"},
	}
	for _, s := range steps {
		if s.open {
			if err := window.Write(e.state, &window.Record{PID: os.Getpid(), HTTP: "127.0.0.1:1", Started: time.Now(), Deadline: time.Now().Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
		}
		r := e.do(t, "POST", s.path, s.token, "")
		if r.status != s.status || !strings.Contains(r.body, s.has) {
			t.Errorf("%s: %d %s; want %d with %q", s.name, r.status, r.body, s.status, s.has)
		}
	}
	if diff := cmp.Diff([]string{"boot pve1"}, fp.calls); diff != "" {
		t.Errorf("BMC calls (-want +got):\n%s", diff)
	}
	pending, _, err := regs.Scan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pending {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff([]string{"pve1", "pve2", "pve3"}, names); diff != "" {
		t.Errorf("pending after the reinstalls (-want +got):\n%s", diff)
	}
}

// TestReinstallWipeData: the body's wipe_data has the install create the
// data pools anew; no body keeps them, and an unknown field is 400 with
// nothing re-armed.
func TestReinstallWipeData(t *testing.T) {
	secrets := &fakeSecrets{passwords: map[string]string{}}
	var regs registry.Registrations
	e := newEnv(t, func(c *api.Config) { c.Secrets, regs = secrets, c.Registry })
	ctx := context.Background()
	r := registry.Registration{Name: "pve4", MACs: []string{"52:54:00:00:00:04"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"},
		Pools: []registry.DataPool{{Name: "tank", Layout: registry.LayoutSingle, Disks: []string{"sdb"}}}}
	if _, err := regs.Register(ctx, r, registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	tok := e.tokens["register"]
	for _, s := range []struct {
		name, body string
		status     int
		has        string
		wipe       bool
	}{
		{"an unknown field", `{"wipe":true}`, 400, "wipe", false},
		{"wipe_data", `{"wipe_data":true}`, 200, `"name":"pve4"`, true},
		{"no body", ``, 200, `"name":"pve4"`, false},
	} {
		if _, err := regs.Consume(ctx, "pve4", registry.ConsumeRecord{Time: time.Now()}); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		res := e.do(t, "POST", "/api/v1/registrations/pve4/reinstall", tok, s.body)
		if res.status != s.status || !strings.Contains(res.body, s.has) {
			t.Errorf("%s: %d %s; want %d with %q", s.name, res.status, res.body, s.status, s.has)
		}
		p, err := regs.Get(ctx, "pve4")
		if s.status != 200 {
			if err == nil {
				t.Errorf("%s: refused, yet pve4 is pending", s.name)
			}
			if err := regs.Rearm(ctx, "pve4", registry.RearmOptions{Force: true}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err != nil || p.WipeData != s.wipe {
			t.Errorf("%s: pending = %+v, %v; want WipeData %t", s.name, p, err, s.wipe)
		}
	}
}
