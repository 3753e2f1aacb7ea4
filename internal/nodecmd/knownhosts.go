package nodecmd

import (
	"context"
	"fmt"
	"strings"

	plasmanode "github.com/plasmactl/plasma-node"
)

// KnownHosts prints an OpenSSH known_hosts for platform's installed
// nodes, one line per host key: the node's hostname, FQDN and address,
// then the key.
func KnownHosts(ctx context.Context, e Env, platform string) (err error) {
	defer func() { err = withHints(err, command{platform: platform}) }()
	p, err := e.Project(ctx)
	if err != nil {
		return err
	}
	hosts, err := p.KnownHosts(ctx, platform, e.ProvisionerDir)
	if err != nil {
		return err
	}
	for _, h := range hosts {
		if _, err := fmt.Fprintln(e.out(), h.Line()); err != nil {
			return err
		}
	}
	return nil
}

// Refresh writes what each installed node's installer reported (address,
// host keys) into its node file and prints one line per installed node,
// saying when its address changed.
func Refresh(ctx context.Context, e Env, platform string) (err error) {
	defer func() { err = withHints(err, command{platform: platform}) }()
	p, err := e.Project(ctx)
	if err != nil {
		return err
	}
	res, err := p.Refresh(ctx, plasmanode.RefreshOptions{Platform: platform, ProvisionerDir: e.ProvisionerDir})
	for _, r := range res {
		if _, werr := fmt.Fprintln(e.out(), refreshLine(r)); werr != nil && err == nil {
			err = werr
		}
	}
	if err == nil && len(res) == 0 {
		_, err = fmt.Fprintf(e.out(), "No node of platform %s has reported an install yet\n", platform)
	}
	return err
}

// refreshLine says what [plasmanode.Project.Refresh] did to one node.
func refreshLine(r plasmanode.Refreshed) string {
	disks := ""
	if len(r.BootDisks) > 0 {
		disks = ", boot disk " + strings.Join(r.BootDisks, " ")
	}
	switch {
	case r.Previous != "":
		return fmt.Sprintf("Refreshed %s: the installed address changed from %s to %s; %d host keys%s", r.Node, r.Previous, r.Address, r.HostKeys, disks)
	case r.Written:
		return fmt.Sprintf("Refreshed %s: installed address %s, %d host keys%s", r.Node, orNone(r.Address), r.HostKeys, disks)
	}
	return fmt.Sprintf("%s is up to date: installed address %s, %d host keys%s", r.Node, orNone(r.Address), r.HostKeys, disks)
}
