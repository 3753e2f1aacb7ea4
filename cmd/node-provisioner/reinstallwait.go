package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registrar"
)

// defaultReinstallWait bounds reinstall --wait: a server's firmware, the
// installer and its reboot.
const defaultReinstallWait = 45 * time.Minute

// installWatch follows the window's events for one machine's install,
// opened before the machine is booted so that no step is missed.
type installWatch struct {
	name  string
	macs  []string
	steps chan backend.Event
	errc  chan error
	stop  context.CancelFunc
}

// watchInstall starts following the events of name (by name, or by its
// MACs before it is matched) from now.
func watchInstall(ctx context.Context, n registrar.Provisioner, name string) (*installWatch, error) {
	ns, err := n.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	w := &installWatch{name: name, steps: make(chan backend.Event, 64), errc: make(chan error, 1)}
	for _, x := range ns {
		if x.Name == name {
			w.macs = append(w.macs, x.MACs...)
		}
	}
	sctx, stop := context.WithCancel(ctx)
	w.stop = stop
	opened := make(chan struct{})
	go func() {
		// The stream gives no sign it is open; a machine's first event
		// comes a BMC's power-on and a firmware's DHCP later.
		time.AfterFunc(300*time.Millisecond, func() { close(opened) })
		w.errc <- n.Events(sctx, client.FromNow, func(_ string, e backend.Event) error {
			if w.mine(e) {
				select {
				case w.steps <- e:
				case <-sctx.Done():
				}
			}
			return nil
		})
	}()
	<-opened
	return w, nil
}

// mine reports whether e is a step of the watched machine's install.
func (w *installWatch) mine(e backend.Event) bool {
	switch e.Kind {
	case events.DHCPOffer, events.Script, events.Kernel, events.Installed:
	case events.Answer:
		if e.Status != 200 {
			return false
		}
	default:
		return false
	}
	return e.Node == w.name || (e.Node == "" && slices.ContainsFunc(w.macs, func(m string) bool { return strings.EqualFold(m, e.MAC) }))
}

// wait prints each step on out until the machine is installed, timeout
// passes or ctx ends; nothing is powered off.
func (w *installWatch) wait(ctx context.Context, out io.Writer, timeout time.Duration) error {
	defer w.stop()
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	seen := []string{"started"}
	for {
		select {
		case e := <-w.steps:
			t := e.Time
			if t.IsZero() {
				t = time.Now()
			}
			fmt.Fprintf(out, "%s  %-20s %-9s %s\n", t.Local().Format("15:04:05"), w.name, e.Kind, e.Detail)
			if !slices.Contains(seen, string(e.Kind)) {
				seen = append(seen, string(e.Kind))
			}
			if e.Kind == events.Installed {
				fmt.Fprintf(out, "Machine %s: %s (%s)\n", w.name, strings.Join(seen, " > "), time.Since(start).Round(time.Second))
				return nil
			}
		case err := <-w.errc:
			if ctx.Err() == nil {
				return fmt.Errorf("reinstall %s: following the window's events: %w", w.name, err)
			}
		case <-ctx.Done():
			fmt.Fprintf(out, "Machine %s: %s\n", w.name, strings.Join(seen, " > "))
			if ctx.Err() == context.DeadlineExceeded {
				return fmt.Errorf("reinstall %s: not installed within %s (nothing was powered off)", w.name, timeout)
			}
			return fmt.Errorf("reinstall %s: stopped waiting; nothing was powered off", w.name)
		}
	}
}
