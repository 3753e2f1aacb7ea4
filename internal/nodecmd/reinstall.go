package nodecmd

import (
	"context"
	"errors"
	"fmt"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/internal/cli"
)

// Reinstall installs one node's machine again and prints what it did: the
// machine before it asks, each step as provision --boot prints them, and
// with o.Wait the node file's refresh; o's prompter comes from e.
func Reinstall(ctx context.Context, e Env, o plasmanode.ReinstallOptions) (err error) {
	defer func() { err = withHints(err, command{platform: o.Platform, approve: "--force"}) }()
	if o.Wait && o.WaitTimeout <= 0 {
		return cli.Usage(fmt.Errorf("--timeout %s: want a positive duration such as 45m", o.WaitTimeout))
	}
	p, err := e.Project(ctx)
	if err != nil {
		return err
	}
	w := e.out()
	o.Prompter = e.prompter()
	o.ProvisionerDir = e.ProvisionerDir
	data := "its data pools kept"
	if o.WipeData {
		data = "its data pools WIPED (created anew)"
	}
	o.OnConfirm = func(node, serverID string) {
		fmt.Fprintf(w, "Reinstall %s: machine %s installs again over its boot disk, with a new root password, %s\n", node, serverID, data)
	}
	prog := newProgress(w)
	o.OnProgress = prog.step
	res, err := p.Reinstall(ctx, o)
	if errors.Is(err, plasmanode.ErrCannotReinstall) {
		return cli.Usage(err)
	}
	var notReady *plasmanode.NotReadyError
	if err != nil && !errors.As(err, &notReady) {
		return err
	}
	if res.Declined {
		return cli.ErrCancelled
	}
	if res.Started || notReady != nil {
		defer prog.summary([]string{res.Hostname})
	}
	for _, r := range res.Refreshed {
		fmt.Fprintln(w, refreshLine(r))
	}
	if notReady != nil {
		return notReady
	}
	return nil
}
