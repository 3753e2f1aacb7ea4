package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/daemon"
	"github.com/plasmactl/plasma-node/pxe/registrar"
)

// remote returns the client of --server, nil without --server.
func (a *app) remote() (*client.Client, error) {
	if a.server == "" {
		return nil, nil
	}
	r, err := a.registrarWith(a.log)
	if err != nil {
		return nil, err
	}
	c, _ := r.(*client.Client)
	return c, nil
}

// remoteOnlyTTL refuses window settings when a daemon opens the window
// (with --server, or the daemon running on the state folder, as where
// says): they are the daemon's.
func remoteOnlyTTL(visited []string, where string) error {
	var set []string
	for _, f := range visited {
		if f != "ttl" && f != "secure-boot" {
			set = append(set, "--"+f)
		}
	}
	switch {
	case len(set) == 1:
		return usageError(fmt.Errorf("%s is a setting of the daemon's windows (given when the daemon starts); %s only --ttl and --secure-boot are taken", set[0], where))
	case len(set) > 1:
		return usageError(fmt.Errorf("%s are settings of the daemon's windows (given when the daemon starts); %s only --ttl and --secure-boot are taken", strings.Join(set, ", "), where))
	}
	return nil
}

// localDaemon returns the daemon running on the state folder (without
// --server), and whether one runs.
func (a *app) localDaemon() (daemon.Record, bool, error) {
	if a.server != "" {
		return daemon.Record{}, false, nil
	}
	return daemon.Running(a.stateDir)
}

// via is daemon.Via of n with the token of registrar.EnvToken: the daemon running
// on the state folder, through its API, when one runs. need makes a
// missing token an error (exit 1) naming the daemon and the scope it
// needs: the daemon owns the state folder's window, a second one is
// never served beside it.
func (a *app) via(n registrar.Operator, need bool, scope string) (registrar.Operator, *daemon.Record, error) {
	op, r, err := daemon.Via(n, os.Getenv(registrar.EnvToken), need, a.log)
	var tn *daemon.TokenNeededError
	if errors.As(err, &tn) {
		return op, r, fmt.Errorf("%v with %s scope in %s (node-provisioner token create NAME --scope %s makes one)", tn, scope, registrar.EnvToken, scope)
	}
	return op, r, err
}

// printWindow prints the window as status shows it.
func (a *app) printWindow(w api.WindowStatus, now time.Time) {
	if !w.Open {
		fmt.Fprintln(a.out, "Window:  closed")
		return
	}
	if w.PID == 0 && w.HTTP == "" { // the site's, served by its other hosts
		fmt.Fprintf(a.out, "Window:  open, %s left (the site's, opened by %s; not served on this host)\n", w.Left(now), w.OpenedBy)
	} else {
		fmt.Fprintf(a.out, "Window:  open, %s left (pid %d", w.Left(now), w.PID)
		if w.Unit != "" {
			fmt.Fprintf(a.out, ", unit %s", w.Unit)
		}
		if w.Daemon {
			fmt.Fprint(a.out, ", daemon")
		}
		fmt.Fprintf(a.out, ")\nHTTP:    %s (answers at %s)\n", w.HTTP, w.URL)
	}
	if w.DHCPInterface != "" {
		fmt.Fprintf(a.out, "DHCP:    proxy on %s\n", w.DHCPInterface)
	}
	if w.TFTP != "" {
		fmt.Fprintf(a.out, "TFTP:    %s\n", w.TFTP)
	}
	for _, h := range w.Hosts {
		what := "not serving"
		if h.Serving {
			what = "serving, answers at " + h.URL
		}
		fmt.Fprintf(a.out, "Host:    %s, API %s: %s (seen %s ago)\n", h.Name, h.API, what, now.Sub(h.Seen).Round(time.Second))
	}
}

// printNodeRows prints the nodes as status shows them.
func (a *app) printNodeRows(st []backend.Node) {
	fmt.Fprintln(a.out, "Nodes:")
	if len(st) == 0 {
		fmt.Fprintln(a.out, "  (no registrations)")
	}
	for _, s := range st {
		detail := strings.Join(s.MACs, ",")
		if s.Problem != "" {
			detail = s.Problem
		}
		fmt.Fprintf(a.out, "  %-16s %-11s %s\n", s.Name, s.State, detail)
	}
}

// printEvent prints one event as status shows it.
func (a *app) printEvent(e backend.Event) {
	who := e.Node
	if who == "" {
		who = e.MAC // a step before the machine is matched: its MAC
	}
	fmt.Fprintf(a.out, "  %s %-10s %-17s %3d %s\n", e.Time.Local().Format("15:04:05"), e.Kind, dash(who), e.Status, e.Detail)
}
