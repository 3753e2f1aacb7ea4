package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/plasmactl/plasma-node/internal/cli"
	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/registrar"
)

func (a *app) discoveredCmd() *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "discovered",
		Short: "List the machines a discovery window found: MACs, DMI serial, disks",
		Example: `  node-provisioner discovered
  node-provisioner discovered -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			recs, err := a.discovered(cmd.Context())
			if err != nil {
				return err
			}
			if output != "table" {
				return cli.WriteData(a.out, output, append([]discovery.Record{}, recs...))
			}
			if len(recs) == 0 {
				fmt.Fprintln(a.out, "No discovered machines.")
				return nil
			}
			rules := a.ruleOutcomes(cmd.Context())
			tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "MAC\tFIRST SEEN\tLAST SEEN\tSERIAL\tPRODUCT\tDISKS\tRULE")
			for _, r := range recs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", strings.Join(r.MACs(), ","), r.FirstSeen.Local().Format(time.DateTime),
					r.LastSeen.Local().Format(time.DateTime), dash(r.DMI.Serial), dash(r.DMI.Product), dash(disksOf(r.Report)), dash(rules[r.ID]))
			}
			return tw.Flush()
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "table", "output format: table, json or yaml")
	return c
}

// disksOf says a report's disks: NAME:SERIAL:SIZE each.
func disksOf(r discovery.Report) string {
	out := make([]string, 0, len(r.Disks))
	for _, d := range r.Disks {
		out = append(out, fmt.Sprintf("%s:%s:%s", d.Name, dash(d.Serial), sizeOf(d.SizeBytes)))
	}
	return strings.Join(out, " ")
}

func sizeOf(b uint64) string {
	const gib = 1 << 30
	if b >= gib {
		return fmt.Sprintf("%.1fGiB", float64(b)/gib)
	}
	return fmt.Sprintf("%.1fMiB", float64(b)/(1<<20))
}

// discovered lists the inbox of --server, else of the state folder.
func (a *app) discovered(ctx context.Context) ([]discovery.Record, error) {
	regs, err := a.registrar()
	if err != nil {
		return nil, err
	}
	in, ok := regs.(registrar.Inbox)
	if !ok {
		return nil, fmt.Errorf("node-provisioner: a %T lists no discovered machines", regs)
	}
	return in.Discovered(ctx)
}

// discoveredPins returns the pins of the discovered machine key names
// (a MAC or its DMI serial), refusing pins also given by flags and a
// boot disk the record does not hold.
func (a *app) discoveredPins(ctx context.Context, key, bootDisk string, flagPins bool) (macs []string, serial, uuid string, err error) {
	if flagPins {
		return nil, "", "", usageError(errors.New("--from-discovered takes the MACs, serial and UUID from the record; give no --mac, --serial or --uuid"))
	}
	recs, err := a.discovered(ctx)
	if err != nil {
		return nil, "", "", err
	}
	rec, err := discovery.Find(recs, key)
	if err != nil {
		return nil, "", "", usageError(fmt.Errorf("--from-discovered: %w (see node-provisioner discovered)", err))
	}
	if bootDisk != "" {
		if _, ok := rec.Disk(bootDisk); !ok {
			var have []string
			for _, d := range rec.Disks {
				if d.Serial != "" {
					have = append(have, d.Serial)
				}
			}
			return nil, "", "", usageError(fmt.Errorf("--boot-disk %q: the discovered machine %s has no disk of that serial (its disks' serials: %s)", bootDisk, rec.ID, dash(strings.Join(have, ", "))))
		}
	}
	macs, serial, uuid = rec.Pins()
	return macs, serial, uuid, nil
}

// ruleOutcomes says, by inbox entry, the rule that takes each machine
// and its name, or why none does ([enrol.PreviewInbox]); none when the
// rules cannot be read (a token without the admin scope).
func (a *app) ruleOutcomes(ctx context.Context) map[string]string {
	out := map[string]string{}
	rs, err := a.rules()
	if err != nil {
		return out
	}
	ds, err := rs.PreviewRules(ctx)
	if err != nil {
		return out
	}
	for _, d := range ds {
		out[d.Machine] = d.Reason
		if d.Reason == "" {
			out[d.Machine] = d.Rule + ": " + d.Name
		}
	}
	return out
}
