package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/plasmactl/plasma-node/internal/cli"
	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/daemon"
	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// errWindowClosed makes status exit 1 while no window is open.
var errWindowClosed = errors.New("the provisioning window is closed")

// statusData is status -o json|yaml: the window, the nodes and, on the
// state folder without --watch, the last ten events.
type statusData struct {
	Window api.WindowStatus `json:"window"`
	Nodes  []backend.Node   `json:"nodes"`
	Events []backend.Event  `json:"recent_events,omitempty"`
}

func (a *app) statusCmd() *cobra.Command {
	var (
		watch        bool
		output       string
		searchDomain string
	)
	c := &cobra.Command{
		Use:   "status [--watch] [-o table|json|yaml]",
		Short: "Show the window, the registrations and recent events; exit 0 only while the window is open",
		Example: `  node-provisioner status
  node-provisioner status >/dev/null && echo open
  node-provisioner status -o json
  node-provisioner status --watch     # the boot steps and answers as they happen, until the window closes
  node-provisioner --server https://prov.example:8091 status --watch`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			if err := registry.ValidateDomain(searchDomain); err != nil {
				return usageError(fmt.Errorf("--search-domain: %w", err))
			}
			ctx, now := cmd.Context(), time.Now()
			n, err := a.node()
			if err != nil {
				return err
			}
			// With a token, the daemon's view, with "daemon" on its window.
			n, d, err := a.via(n, false, "read")
			if err != nil {
				return err
			}
			w, err := n.Window(ctx)
			if _, local := n.(daemon.Local); d != nil && local && w.Open && w.PID == d.PID {
				w.Daemon = true // read from the state folder, without a token
			}
			if err != nil {
				return err
			}
			st, err := a.nodes(ctx)
			if err != nil {
				return err
			}
			var recent []backend.Event
			if a.server == "" && !watch { // the state folder's own log, with or without a local daemon
				recent = a.recentEvents(ctx, 10)
			}
			data := statusData{Window: w, Nodes: append([]backend.Node{}, st...), Events: recent}
			switch {
			case watch && output != "table":
				// A stream: the status, then each event, as one JSON line
				// or one YAML document each.
				if err := a.writeItem(output, data); err != nil {
					return err
				}
			case output != "table":
				if err := cli.WriteData(a.out, output, data); err != nil {
					return err
				}
			default:
				a.printWindow(w, now)
				a.printNodeRows(st)
				if len(recent) > 0 {
					fmt.Fprintln(a.out, "Recent events:")
					for _, e := range recent {
						a.printEvent(e)
					}
				}
			}
			// A generic ISO finds the window by the site's TXT records:
			// warn where they point elsewhere.
			a.checkSiteRecords(ctx, w, searchDomain)
			if watch {
				return a.watch(ctx, n, w.Open, output)
			}
			if !w.Open {
				return errWindowClosed
			}
			return nil
		},
	}
	c.Flags().BoolVarP(&watch, "watch", "w", false, "then print events as they happen (the boot steps and answers) until the window closes, or until interrupted when none is open")
	c.Flags().StringVar(&searchDomain, "search-domain", "", "check the DNS TXT records a generic ISO reads under this search domain (default: checked under site.json's domain when a generic release is staged)")
	c.Flags().StringVarP(&output, "output", "o", "table", "output format: table, json or yaml (with --watch: one JSON line or YAML document per event)")
	return c
}

// checkOutput refuses an -o value other than table, json and yaml.
func checkOutput(output string) error {
	switch output {
	case "table", "json", "yaml":
		return nil
	}
	return usageError(fmt.Errorf("--output %q: want table, json or yaml", output))
}

// watch prints new events (of --server's event stream, else of the
// state folder's event log) until ctx ends (Ctrl-C) or, when the window
// was open as it started, until the window closes (registrar.Follow);
// either is a nil error.
func (a *app) watch(ctx context.Context, n registrar.Provisioner, open bool, output string) error {
	if output == "table" {
		// An open window's watch also ends when it closes, with a line
		// saying so.
		fmt.Fprintln(a.out, "Events (until interrupted):")
	}
	closed, err := registrar.Follow(ctx, n, open, func(e backend.Event) error {
		if output != "table" {
			return a.writeItem(output, e)
		}
		a.printEvent(e)
		return nil
	})
	if closed && output == "table" {
		fmt.Fprintln(a.out, "Window closed")
	}
	return err
}

// writeItem writes one item of status --watch's stream: a JSON line, or
// a YAML document.
func (a *app) writeItem(output string, v any) error {
	if output == "json" {
		return json.NewEncoder(a.out).Encode(v)
	}
	fmt.Fprintln(a.out, "---")
	return cli.WriteData(a.out, "yaml", v)
}

// recentEvents returns the last n events of the state folder, none when
// they cannot be read; nothing is created.
func (a *app) recentEvents(ctx context.Context, n int) []backend.Event {
	evs, err := a.localState().EventStore(ctx)
	if err != nil {
		return nil
	}
	recs, err := evs.Read(ctx, "", 0)
	if err != nil || len(recs) == 0 {
		return nil
	}
	out := make([]backend.Event, 0, n)
	for _, r := range recs[max(0, len(recs)-n):] {
		out = append(out, r.Event)
	}
	return out
}
