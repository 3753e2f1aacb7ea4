package pxe

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/pxe/apitype"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// reinstallLab is node-provisioner's API as far as a reinstall goes: it
// re-arms the registration in its folder and boots the machine, which
// then sends the window's events of an install.
type reinstallLab struct{ *bootLab }

func (r reinstallLab) Reinstall(ctx context.Context, name string, req apitype.ReinstallRequest) (apitype.ReinstallReply, error) {
	if _, err := r.LocalRegistry.Reinstall(ctx, name, req); err != nil {
		return apitype.ReinstallReply{}, err
	}
	b, err := r.Boot(ctx, name)
	return apitype.ReinstallReply{Name: name, Boot: &b}, err
}

// consumedLab is a lab whose metal-control-001 was installed.
func consumedLab(t *testing.T) (*bootLab, string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	lab := &bootLab{LocalRegistry: &LocalRegistry{Dir: dir}, events: make(chan backend.Event, 32)}
	if _, err := lab.Register(ctx, reg("metal-control-001", "52:54:00:00:00:01"), registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	consume(t, dir, "metal-control-001")
	return lab, dir
}

// consume has the registration name of the state folder dir consumed, as
// its machine's install does.
func consume(t *testing.T, dir, name string) {
	t.Helper()
	g, _ := folder.OpenRegistrations(dir, nil)
	if _, err := g.Consume(context.Background(), name, registry.ConsumeRecord{Time: time.Now(), ClientIP: "192.0.2.10"}); err != nil {
		t.Fatal(err)
	}
}

// TestReinstallFollowsTheMachine: through the API, Reinstall re-arms the
// installed registration, its BMC boots the machine (the started step
// says both), and the window's events are followed until it is installed
// again, as Start follows a new machine.
func TestReinstallFollowsTheMachine(t *testing.T) {
	lab, dir := consumedLab(t)
	pv := &Provider{Dial: func(context.Context, providers.Remote, *slog.Logger) (Registry, error) { return reinstallLab{lab}, nil }}
	at := providers.Location{Remote: &providers.Remote{URL: "https://site:8091", Token: "t"}}
	var mu sync.Mutex
	var steps []events.Kind
	var started string
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	notReady, err := pv.Reinstall(ctx, at, []string{"metal-control-001"}, providers.ReinstallOptions{Wait: true}, func(p providers.Progress) {
		mu.Lock()
		defer mu.Unlock()
		steps = append(steps, p.Step)
		if p.Step == events.Started {
			started = p.Detail
		}
	})
	if err != nil || len(notReady) != 0 {
		t.Fatalf("Reinstall: not ready %v, %v", notReady, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]events.Kind{events.Started, events.DHCPOffer, events.Script, events.Kernel, events.Answer, events.Installed}, steps); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if want := "re-armed for one install with a new root password; next boot PXE once (legacy), power on via ipmi"; started != want {
		t.Errorf("started: %q, want %q", started, want)
	}
	g, _ := folder.OpenRegistrations(dir, nil)
	if _, err := g.Get(context.Background(), "metal-control-001"); err != nil {
		t.Errorf("the registration is not pending again: %v", err)
	}
}

// TestReinstallLocal: a local state folder's registration is re-armed
// without waiting; asked to wait, it is refused before anything is
// re-armed (no events to follow); a name with no installed registration
// fails its machine, naming it.
func TestReinstallLocal(t *testing.T) {
	_, dir := consumedLab(t)
	ctx := context.Background()
	at := providers.Location{Dir: dir}
	g, _ := folder.OpenRegistrations(dir, nil)
	if _, err := (&Provider{}).Reinstall(ctx, at, []string{"metal-control-001"}, providers.ReinstallOptions{Wait: true}, func(providers.Progress) {}); !errors.Is(err, ErrNoBootControl) {
		t.Errorf("wait on a local folder: %v; want ErrNoBootControl", err)
	}
	if _, err := g.Get(ctx, "metal-control-001"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("a refused reinstall re-armed the registration: %v", err)
	}
	var got []string
	fn := func(p providers.Progress) { got = append(got, string(p.Step)+": "+p.Detail+errText(p.Err)) }
	if _, err := (&Provider{}).Reinstall(ctx, at, []string{"metal-control-001"}, providers.ReinstallOptions{}, fn); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Get(ctx, "metal-control-001"); err != nil {
		t.Errorf("not re-armed: %v", err)
	}
	_, err := (&Provider{}).Reinstall(ctx, at, []string{"metal-control-001"}, providers.ReinstallOptions{}, fn)
	if !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("second reinstall: %v; want ErrNotFound", err)
	}
	want := []string{"started: re-armed for one install with a new root password; netboot its machine",
		"failed: reinstall metal-control-001: registration metal-control-001 is still pending: its machine gets its answer when it boots; nothing to reinstall"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return strings.TrimSpace(err.Error())
}

// TestReinstallLocalSaysHowAVirtualMediaMachineBoots: a local state
// folder's registration that boots by virtual media (its own boot
// method or the site's) is re-armed, and the step says its BMC boots it
// from virtual media with node-provisioner boot, not "netboot its
// machine", which no network boot would reach.
func TestReinstallLocalSaysHowAVirtualMediaMachineBoots(t *testing.T) {
	const (
		vm  = reArmed + "; node-provisioner boot metal-control-001 boots it from its BMC's virtual media"
		net = reArmed + "; netboot its machine (node-provisioner boot metal-control-001 boots it through its BMC)"
	)
	tests := map[string]struct {
		own  registry.BootMethod
		site string // site.json
		want string
	}{
		"its own virtual media":           {own: registry.BootVirtualMedia, want: vm},
		"the site's virtual media":        {site: `{"boot_method": "virtual-media"}`, want: vm},
		"its own network over the site's": {own: registry.BootNetwork, site: `{"boot_method": "virtual-media"}`, want: net},
		"network":                         {want: net},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			if tc.site != "" {
				os.WriteFile(filepath.Join(dir, registry.SiteFileName), []byte(tc.site), 0o600)
			}
			r := reg("metal-control-001", "52:54:00:00:00:01")
			r.BMC, r.BootMethod = &registry.BMC{URL: "redfish://10.0.0.5", User: "root"}, tc.own
			if _, err := (&LocalRegistry{Dir: dir}).RegisterWithBMCPassword(ctx, r, registry.RegisterOptions{}, "pw"); err != nil {
				t.Fatal(err)
			}
			consume(t, dir, r.Name)
			var got []string
			fn := func(p providers.Progress) { got = append(got, p.Detail+errText(p.Err)) }
			if _, err := (&Provider{}).Reinstall(ctx, providers.Location{Dir: dir}, []string{r.Name}, providers.ReinstallOptions{}, fn); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{tc.want}, got); diff != "" {
				t.Errorf("the started step (-want +got):\n%s", diff)
			}
		})
	}
}
