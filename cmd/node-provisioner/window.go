package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/plasmactl/plasma-node/answer/registry"
	"github.com/plasmactl/plasma-node/pxe"
)

func (a *app) enableCmd() *cobra.Command {
	var o serveOptions
	c := &cobra.Command{
		Use:   "enable [--ttl DURATION] [--http ADDR] [--bootfile snponly.efi|ipxe.efi] [--dhcp-hook CMD]",
		Short: "Open the provisioning window in the background (a transient systemd unit, or a detached process)",
		Example: `  node-provisioner enable --ttl 2h
  node-provisioner enable --http 127.0.0.1:8090 --ttl 10m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := o.check(); err != nil {
				return err
			}
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			argv := append([]string{exe, "--state-dir", abs(a.stateDir), "--secrets-dir", abs(a.secretsDir), "--log-format", "json", "serve"}, serveArgs(cmd.Flags())...)
			w, err := pxe.Enable(cmd.Context(), pxe.EnableOptions{Command: argv, StateDir: a.stateDir, TTL: o.cfg.TTL, Logger: a.log})
			if errors.Is(err, pxe.ErrWindowOpen) && w == nil {
				fmt.Fprintf(a.out, "The provisioning window is already open: %v\n", err)
				return nil
			}
			if errors.Is(err, pxe.ErrWindowOpen) {
				fmt.Fprintf(a.out, "The provisioning window is already open: %s, %s left\n", w.URL, w.Left(time.Now()))
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(a.out, "Provisioning window open: %s until %s (pid %d)\n", w.URL, w.Deadline.Format(time.RFC3339), w.PID)
			return nil
		},
	}
	o.bind(c.Flags())
	return c
}

// serveArgs renders the flags given to enable as serve's command line,
// with key files made absolute (the window may run in another folder).
func serveArgs(f *pflag.FlagSet) []string {
	var out []string
	f.Visit(func(fl *pflag.Flag) {
		vals := []string{fl.Value.String()}
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			vals = sv.GetSlice()
		}
		for _, v := range vals {
			if fl.Name == "ssh-key" {
				v = abs(v)
			}
			out = append(out, "--"+fl.Name+"="+v)
		}
	})
	return out
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func (a *app) disableCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "disable",
		Short:   "Close the provisioning window (idempotent)",
		Example: "  node-provisioner disable",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			closed, err := pxe.Disable(cmd.Context(), a.stateDir, 0)
			if err != nil {
				return err
			}
			if closed {
				fmt.Fprintln(a.out, "Provisioning window closed")
			} else {
				fmt.Fprintln(a.out, "No provisioning window was open")
			}
			return nil
		},
	}
}

// errWindowClosed makes status exit 1 while no window is open.
var errWindowClosed = errors.New("the provisioning window is closed")

func (a *app) statusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show the window, the registrations and recent events; exit 0 only while the window is open",
		Example: `  node-provisioner status
  node-provisioner status >/dev/null && echo open`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			now := time.Now()
			w, err := pxe.ReadWindow(a.stateDir)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			open := err == nil && w.Open(now)
			if open {
				fmt.Fprintf(a.out, "Window:  open, %s left (pid %d", w.Left(now), w.PID)
				if w.Unit != "" {
					fmt.Fprintf(a.out, ", unit %s", w.Unit)
				}
				fmt.Fprintf(a.out, ")\nHTTP:    %s (answers at %s)\n", w.HTTP, w.URL)
				if w.DHCPInterface != "" {
					fmt.Fprintf(a.out, "DHCP:    proxy on %s\n", w.DHCPInterface)
				}
				if w.TFTP != "" {
					fmt.Fprintf(a.out, "TFTP:    %s\n", w.TFTP)
				}
			} else {
				fmt.Fprintln(a.out, "Window:  closed")
			}
			reg, err := registry.Open(a.stateDir, a.log)
			if err != nil {
				return err
			}
			st, err := registry.Status(cmd.Context(), reg, a.stateDir)
			if err != nil {
				return err
			}
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
			evs, err := registry.ReadEvents(filepath.Join(a.stateDir, registry.EventsFileName))
			if err == nil && len(evs) > 0 {
				fmt.Fprintln(a.out, "Recent events:")
				for _, e := range evs[max(0, len(evs)-10):] {
					fmt.Fprintf(a.out, "  %s %-10s %-12s %3d %s\n", e.Time.Local().Format("15:04:05"), e.Kind, dash(e.Node), e.Status, e.Detail)
				}
			}
			if !open {
				return errWindowClosed
			}
			return nil
		},
	}
}
