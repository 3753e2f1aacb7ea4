package nodecmd

import (
	"context"
	"errors"
	"fmt"
	"io"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/internal/cli"
)

// Delete removes one node, destroying its server first when it has one
// (unless o.KeepServer), and prints what went: the plan before it asks,
// then the server and the node file.
func Delete(ctx context.Context, e Env, o plasmanode.DeleteOptions) (err error) {
	defer func() { err = withHints(err, command{platform: o.Platform, approve: "--force"}) }()
	doc, err := e.document()
	if err != nil {
		return err
	}
	p, err := e.Project(ctx)
	if err != nil {
		return err
	}
	w := e.out()
	o.Prompter = e.prompter()
	var closeLog func() error
	o.Stdout, o.Stderr, closeLog = e.tofuStreams()
	defer func() { err = errors.Join(err, closeLog()) }()
	o.OnPlan = func(pl plasmanode.DestroyPlan) { writeDestroyPlan(e.planw(doc), pl) }
	res, err := p.Delete(ctx, o)
	if errors.Is(err, plasmanode.ErrNoPool) {
		return fmt.Errorf("%w; --keep-server removes the node file and leaves the server", err)
	}
	if err != nil {
		return err
	}
	if res.Declined {
		return cli.ErrCancelled
	}
	if doc {
		return encode(w, e.Output, res.Plan)
	}
	if o.DryRun {
		fmt.Fprintln(w, "Dry run: nothing changed")
		return nil
	}
	node := res.Hostname + "@" + res.Platform
	switch {
	case res.Withdrawn:
		fmt.Fprintf(w, "Withdrew machine %s of node %s (pool %s: count lowered by one)\n", res.ServerID, node, res.Pool)
	case res.Destroyed:
		fmt.Fprintf(w, "Destroyed server %s of node %s (pool %s: count lowered by one)\n", res.ServerID, node, res.Pool)
	case res.ServerID != "" && o.KeepServer && res.Pool != "":
		fmt.Fprintf(w, "Kept server %s of node %s: it is no longer in the project (pool %s: count lowered by one)\n", res.ServerID, node, res.Pool)
	case res.ServerID != "" && o.KeepServer:
		fmt.Fprintf(w, "Kept server %s of node %s: it is no longer in the project\n", res.ServerID, node)
	}
	if res.Removed {
		fmt.Fprintf(w, "Removed node %s\n", node)
	}
	return nil
}

// planw is where the plan for people goes: Stdout, or the prompts'
// writer when Stdout carries a document.
func (e Env) planw(doc bool) io.Writer {
	if doc {
		return e.promptw()
	}
	return e.out()
}
