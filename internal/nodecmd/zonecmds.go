package nodecmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/internal/cli"
)

// ErrInvalidNodes is the error of a validate that found errors: exit 1,
// after the table.
var ErrInvalidNodes = errors.New("validation found errors")

// Register registers a node by hand, as plasmactl-node's node:register:
// --hostname and --public-ip are required; the rules are add
// --hostname's.
func Register(ctx context.Context, e Env, ro plasmanode.RegisterOptions, changed Changed) (err error) {
	defer func() { err = withHints(err, command{platform: ro.Platform}) }()
	for _, f := range []string{"hostname", "public-ip"} {
		if !changed(f) {
			return cli.Usage(fmt.Errorf("--%s is required", f))
		}
	}
	p, err := e.Project(ctx)
	if err != nil {
		return err
	}
	n, err := p.Register(ctx, ro)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.out(), "Registered node %s (private IP %s) in %s\n", n, n.Network.PrivateIP, n.File())
	return nil
}

// Deallocate removes zones from a node and prints what it removed.
func Deallocate(ctx context.Context, e Env, o plasmanode.DeallocateOptions, output string) (err error) {
	defer func() { err = withHints(err, command{platform: o.Platform}) }()
	p, err := e.projectFor(ctx, output)
	if err != nil {
		return err
	}
	res, err := p.Deallocate(ctx, o)
	var notHeld *plasmanode.ZoneNotHeldError
	if errors.As(err, &notHeld) && notHeld.Below {
		return &hinted{msg: err.Error() + "; --recursive removes the zones below it too", err: err}
	}
	if err != nil {
		return err
	}
	w := e.out()
	if output != "table" {
		return encode(w, output, res)
	}
	fmt.Fprintf(w, "Removed from %s@%s: %s\n", res.Hostname, res.Platform, strings.Join(res.Removed, ", "))
	printZones(w, res.Hostname, res.Platform, res.Zones)
	return nil
}

// printZones lists a node's zones, one a line, or "(none)".
func printZones(w io.Writer, hostname, platform string, zs []string) {
	fmt.Fprintf(w, "%s@%s zones:\n", hostname, platform)
	if len(zs) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	for _, z := range zs {
		fmt.Fprintln(w, " ", z)
	}
}

// Query prints the nodes a zone, or a zone below it, is allocated to, or
// those a component lands on.
func Query(ctx context.Context, e Env, o plasmanode.QueryOptions, output string) (err error) {
	defer func() { err = withHints(err, command{platform: o.Platform}) }()
	p, err := e.projectFor(ctx, output)
	if err != nil {
		return err
	}
	res, err := p.Query(ctx, o)
	if err != nil {
		return err
	}
	w := e.out()
	if output != "table" {
		return encode(w, output, res)
	}
	switch {
	case res.Component != "" && len(res.Nodes) == 0:
		fmt.Fprintf(w, "No nodes in the zones component %s is attached to (%s).\n", res.Component, strings.Join(res.AttachedTo, ", "))
		return nil
	case len(res.Nodes) == 0:
		fmt.Fprintf(w, "No nodes in zone %s.\n", res.Zone)
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tPLATFORM\tZONES")
	for _, n := range res.Nodes {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", n.Node, n.Platform, strings.Join(n.Zones, ","))
	}
	return tw.Flush()
}

// Validate checks the nodes name selects (a platform, a node, or all
// for "") and prints the checks; errors found are [ErrInvalidNodes]
// (exit 1), warnings alone are not.
func Validate(ctx context.Context, e Env, name, output string) (err error) {
	defer func() { err = withHints(err, command{}) }()
	p, err := e.projectFor(ctx, output)
	if err != nil {
		return err
	}
	res, err := p.Validate(ctx, name)
	if err != nil {
		return err
	}
	w := e.out()
	if output != "table" {
		err = encode(w, output, res)
	} else {
		err = printValidation(w, res)
	}
	if err == nil && res.HasErrors {
		err = fmt.Errorf("%s: %w", invalidCount(res), ErrInvalidNodes)
	}
	return err
}

// invalidCount says how many platforms and nodes have errors.
func invalidCount(res plasmanode.ValidateResult) string {
	var parts []string
	bad := 0
	for _, p := range res.Platforms {
		if !p.Valid {
			bad++
		}
	}
	if bad > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d platforms", bad, len(res.Platforms)))
	}
	if n := res.TotalNodes - res.ValidNodes; n > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d nodes", n, res.TotalNodes))
	}
	return strings.Join(parts, " and ")
}

// printValidation writes one row per node: its worst status and what
// its failing checks say.
func printValidation(w io.Writer, res plasmanode.ValidateResult) error {
	printPlatformChecks(w, res.Platforms)
	if res.TotalNodes == 0 {
		fmt.Fprintln(w, "No nodes.")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tPLATFORM\tSTATUS\tPROBLEMS")
	for _, n := range res.Nodes {
		if n.Broken {
			fmt.Fprintf(tw, "%s\t%s\tBROKEN\t%s\n", n.Hostname, n.Platform, n.Checks[0].Message)
			continue
		}
		status := plasmanode.CheckOK
		var problems []string
		for _, c := range n.Checks {
			if c.Status == plasmanode.CheckOK {
				continue
			}
			if status != plasmanode.CheckError {
				status = c.Status
			}
			problems = append(problems, c.Name+": "+c.Message)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n.Hostname, n.Platform, status, dash(strings.Join(problems, "; ")))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d of %d nodes valid", res.ValidNodes, res.TotalNodes)
	if res.HasWarnings {
		fmt.Fprint(w, ", with warnings")
	}
	fmt.Fprintln(w)
	return nil
}

// printPlatformChecks writes one line per platform with a problem, each
// problem on its own line below it; nothing when every platform is
// valid.
func printPlatformChecks(w io.Writer, ps []plasmanode.ValidatedPlatform) {
	for _, p := range ps {
		if len(p.Checks) == 0 {
			continue
		}
		status := "invalid"
		if p.Valid {
			status = "warning"
		}
		if p.Broken {
			status = "BROKEN"
		}
		fmt.Fprintf(w, "platform %s (%s): %s\n", p.Platform, p.File, status)
		for _, c := range p.Checks {
			fmt.Fprintf(w, "  %s\n", c.Message)
		}
	}
}
