package nodecmd

import (
	"context"
	"fmt"
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
