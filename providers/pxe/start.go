package pxe

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/events"
)

// ErrNoBootControl: machines of a local state folder are not booted by
// plasma-node; their BMCs are driven by node-provisioner on the site's
// host, through its API.
var ErrNoBootControl = errors.New("no BMC control here")

// Booter is a [Registry] that can boot a registered machine into the
// installer through its BMC and follow the boot steps: node-provisioner's
// API (a *client.Client).
type Booter interface {
	Registry
	// Boot sets the next boot to PXE once and powers the machine on (or
	// cycles it).
	Boot(ctx context.Context, name string) (client.BootReply, error)
	// Events calls fn with each event after lastID (client.FromNow: new
	// ones only) until ctx ends or fn fails.
	Events(ctx context.Context, lastID string, fn func(id string, e backend.Event) error) error
}

var _ Booter = (*client.Client)(nil)

// isStep reports whether an event of kind k is a step of a start.
func isStep(k events.Kind) bool {
	switch k {
	case events.DHCPOffer, events.Script, events.Kernel, events.Answer, events.Installed:
		return true
	}
	return false
}

// Start boots each of hosts through its BMC (node-provisioner's API:
// PXE once, power on) and, with wait, follows the window's events until
// each is installed or ctx ends. A machine whose boot is refused (no BMC,
// the window closed, the BMC's error) is a failed step; the others go on.
// It never powers a machine off.
//
// Errors: [ErrNoBootControl] for a local state folder.
func (pv *Provider) Start(ctx context.Context, at providers.Location, hosts []string, wait bool, fn func(providers.Progress)) ([]string, error) {
	if at.Remote == nil {
		return hosts, fmt.Errorf("%w: booting machines needs node-provisioner's API (infrastructure.provisioner_url), which drives their BMCs from the site's host; or run node-provisioner boot NAME there", ErrNoBootControl)
	}
	b, err := pv.booter(ctx, at)
	if err != nil {
		return hosts, err
	}
	return run(ctx, b, hosts, wait, fn, func(ctx context.Context, h string) (string, error) {
		res, err := b.Boot(ctx, h)
		if err != nil {
			return "", err
		}
		return bootDetail(res), nil
	})
}

// booter opens the registry of a remote location, which boots machines.
func (pv *Provider) booter(ctx context.Context, at providers.Location) (Booter, error) {
	reg, err := pv.open(ctx, at, nil)
	if err != nil {
		return nil, err
	}
	b, ok := reg.(Booter)
	if !ok {
		return nil, fmt.Errorf("%w: the registry of %s cannot boot machines", ErrNoBootControl, at)
	}
	return b, nil
}

// bootDetail says how a BMC booted a machine.
func bootDetail(res client.BootReply) string {
	how := "power on"
	if res.Cycled {
		how = "power cycle"
	}
	return fmt.Sprintf("next boot %s once (%s), %s via %s", res.Next(), res.Mode, how, res.Protocol)
}

// run starts each of hosts with kick (which returns what it did) and,
// with wait, follows the window's events until each is installed or ctx
// ends; a host kick fails is a failed step, and the others go on.
func run(ctx context.Context, b Booter, hosts []string, wait bool, fn func(providers.Progress), kick func(context.Context, string) (string, error)) ([]string, error) {
	f := &follow{hosts: hosts, done: map[string]bool{}, failed: map[string]bool{}, fn: fn, all: make(chan struct{})}
	var wg sync.WaitGroup
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	if wait {
		var err error
		if f.macs, err = macsOf(ctx, b, hosts); err != nil {
			return hosts, err
		}
		ready := make(chan struct{})
		wg.Go(func() { f.stream(fctx, b, ready) })
		select { // the stream is open before the first boot
		case <-ready:
		case <-ctx.Done():
		}
	}
	var errs []error
	for _, h := range hosts {
		detail, err := kick(ctx, h)
		if err != nil {
			errs = append(errs, err)
			f.fail(h, err)
			continue
		}
		f.emit(providers.Progress{Hostname: h, Step: events.Started, Time: time.Now(), Detail: detail})
	}
	if !wait {
		return hosts, errors.Join(errs...)
	}
	f.check()
	select {
	case <-f.all:
	case <-ctx.Done():
		errs = append(errs, ctx.Err())
	}
	stop()
	wg.Wait()
	return f.notReady(), errors.Join(errs...)
}

// macsOf returns the hosts' registration MACs, to name the steps taken
// before a machine is matched (its DHCP offer, its kernel).
func macsOf(ctx context.Context, b Booter, hosts []string) (map[string]string, error) {
	ns, err := b.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, n := range ns {
		if slices.Contains(hosts, n.Name) {
			for _, m := range n.MACs {
				out[m] = n.Name
			}
		}
	}
	return out, nil
}

// follow is the state of a wait: which hosts are done or failed.
type follow struct {
	mu           sync.Mutex
	hosts        []string
	macs         map[string]string
	done, failed map[string]bool
	fn           func(providers.Progress)
	all          chan struct{}
	closed       bool
}

func (f *follow) emit(p providers.Progress) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fn(p)
}

func (f *follow) fail(h string, err error) {
	f.mu.Lock()
	f.failed[h] = true
	f.mu.Unlock()
	f.emit(providers.Progress{Hostname: h, Step: events.Failed, Time: time.Now(), Err: err})
}

// check closes all once every host is installed or failed.
func (f *follow) check() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, h := range f.hosts {
		if !f.done[h] && !f.failed[h] {
			return
		}
	}
	if !f.closed {
		f.closed = true
		close(f.all)
	}
}

func (f *follow) notReady() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, h := range f.hosts {
		if !f.done[h] {
			out = append(out, h)
		}
	}
	return out
}

// stream follows the event stream, reconnecting (the client retries
// reads) until ctx ends; ready is closed once it is open.
func (f *follow) stream(ctx context.Context, b Booter, ready chan struct{}) {
	var once sync.Once
	open := func() { once.Do(func() { close(ready) }) }
	defer open()
	// The client gives no sign that its stream is open; a new event comes
	// a BMC's power-on and a firmware's DHCP later, so a moment after the
	// first call is enough.
	time.AfterFunc(300*time.Millisecond, open)
	last := client.FromNow
	for ctx.Err() == nil {
		err := b.Events(ctx, last, func(id string, e backend.Event) error {
			last = id
			f.event(e)
			return nil
		})
		if err != nil && ctx.Err() == nil {
			time.Sleep(time.Second)
		}
	}
}

// event turns one window event into a step of the host it is about.
func (f *follow) event(e backend.Event) {
	step := e.Kind
	if !isStep(step) || (step == events.Answer && e.Status != 200) {
		return
	}
	h := e.Node
	if !slices.Contains(f.hosts, h) {
		h = f.macs[e.MAC]
	}
	if h == "" {
		return
	}
	f.emit(providers.Progress{Hostname: h, Step: step, Time: e.Time, Detail: e.Detail})
	if step == events.Installed {
		f.mu.Lock()
		f.done[h] = true
		f.mu.Unlock()
		f.check()
	}
}
