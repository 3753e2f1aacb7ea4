package nodecmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/internal/cli"
	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/tofu"
)

// dirEnv is the environment variable naming the project folder when no
// --dir is given.
const dirEnv = "PLASMA_NODE_DIR"

// Env is what every command needs from its front end.
type Env struct {
	// Dir is the project folder (--dir). Empty: $PLASMA_NODE_DIR, else the
	// nearest folder upward that holds platforms/, else the current one.
	Dir string
	// ProvisionerDir is node-provisioner's state folder for pxe platforms
	// (--provisioner-dir); empty: plasmanode.Options' default order.
	ProvisionerDir string
	// Logger receives what the operations report; nil discards it.
	Logger *slog.Logger
	// Stdin answers confirmation prompts when it is a terminal
	// ([cli.IsTerminal]); otherwise, and when nil, a command that would
	// ask refuses at once, naming the flag that proceeds without asking.
	Stdin io.Reader
	// Stdout receives the results; Stderr the prompts and tofu's errors.
	// Nil discards them.
	Stdout, Stderr io.Writer
	// Prompts receives the confirmation questions. Default: Stderr.
	Prompts io.Writer
	// Providers are the providers platforms may name; nil: the built-in
	// ones (plasmanode.Options.Providers).
	Providers *providers.Set
	// Verbose streams tofu's own output to Stdout and Stderr (-v); by
	// default only the classified plan and the results are printed, and a
	// tofu failure is reported once, in the error.
	Verbose bool
	// TofuLog is a file tofu's own output is appended to (--tofu-log),
	// Verbose or not; it is created at tofu's first line.
	TofuLog string
	// Output is the format add, provision, join, delete and destroy
	// print their plan in (-o): "table" or empty for people, "json" or
	// "yaml" for programs (a plasmanode.Plan document; prompts and the
	// plan for people then go to Prompts).
	Output string
}

// document reports whether e prints a plasmanode.Plan document, after
// checking its Output.
func (e Env) document() (bool, error) {
	if e.Output == "" || e.Output == "table" {
		return false, nil
	}
	return true, checkOutput(e.Output)
}

// promptw is where prompts go: Prompts, else Stderr.
func (e Env) promptw() io.Writer {
	if e.Prompts != nil {
		return e.Prompts
	}
	return e.errw()
}

func (e Env) out() io.Writer {
	if e.Stdout == nil {
		return io.Discard
	}
	return e.Stdout
}

func (e Env) errw() io.Writer {
	if e.Stderr == nil {
		return io.Discard
	}
	return e.Stderr
}

func (e Env) prompter() plasmanode.Prompter {
	if !cli.IsTerminal(e.Stdin) {
		return nil
	}
	return cli.NewLinePrompter(e.Stdin, e.promptw())
}

// tofuStreams returns the writers tofu's own output goes to: the
// TofuLog file, else Stdout and Stderr with Verbose, else none; close
// closes the file.
func (e Env) tofuStreams() (stdout, stderr io.Writer, close func() error) {
	switch {
	case e.TofuLog != "":
		f := &lazyFile{path: e.TofuLog}
		return f, f, f.Close
	case e.Verbose:
		return e.out(), e.errw(), func() error { return nil }
	}
	return nil, nil, func() error { return nil }
}

// lazyFile appends to the file at path, created at the first write, so
// that a command refused for bad input writes nothing.
type lazyFile struct {
	path string
	mu   sync.Mutex
	f    *os.File
}

// Write appends p to the file, opening it first.
func (l *lazyFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return 0, fmt.Errorf("--tofu-log: %w", err)
		}
		l.f = f
	}
	return l.f.Write(p)
}

// Close closes the file, if it was opened.
func (l *lazyFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}

// Project opens the project folder Env names; one that does not exist
// or is not a folder is bad input (plasmanode.ErrProjectDir).
func (e Env) Project(ctx context.Context) (*plasmanode.Project, error) {
	dir := e.Dir
	if dir == "" {
		dir = os.Getenv(dirEnv)
	}
	if dir == "" {
		d, err := plasmanode.FindProjectDir(".")
		if err != nil {
			return nil, err
		}
		dir = d
	}
	return plasmanode.OpenProject(ctx, dir, plasmanode.Options{Logger: e.Logger, ProvisionerDir: e.ProvisionerDir, Providers: e.Providers})
}

// projectFor checks the -o value, then opens the project.
func (e Env) projectFor(ctx context.Context, output string) (*plasmanode.Project, error) {
	if err := checkOutput(output); err != nil {
		return nil, err
	}
	return e.Project(ctx)
}

// ExitCode is the exit code for err: 0 for none, 2 for bad usage or bad
// input ([cli.IsUsage], [plasmanode.IsUsageError]), else 1.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case cli.IsUsage(err) || plasmanode.IsUsageError(err):
		return 2
	}
	return 1
}

// Changed reports whether the person gave the named option (flag name
// without dashes).
type Changed func(name string) bool

// Add scaffolds platform so describes, or, with ro.Hostname, registers a
// node in it; options of the other mode are usage errors.
func Add(ctx context.Context, e Env, platform string, so plasmanode.ScaffoldOptions, ro plasmanode.RegisterOptions, changed Changed) (err error) {
	defer func() { err = withHints(err, command{platform: platform}) }()
	if ro.Hostname == "" {
		for _, f := range []string{"public-ip", "private-ip", "zone", "ip-pool"} {
			if changed(f) {
				return cli.Usage(fmt.Errorf("--%s needs --hostname (it registers a node)", f))
			}
		}
	} else {
		for _, f := range []string{"provider", "domain", "private-network"} {
			if changed(f) {
				return cli.Usage(fmt.Errorf("--%s sets up a platform; it cannot be combined with --hostname", f))
			}
		}
	}
	doc, err := e.document()
	if err != nil {
		return err
	}
	p, err := e.Project(ctx)
	if err != nil {
		return err
	}
	w := e.out()
	if ro.Hostname == "" {
		so.Platform = platform
		res, err := p.Scaffold(ctx, so)
		if err != nil {
			return err
		}
		if doc {
			return encode(w, e.Output, plasmanode.AddPlan(res.Platform, res.Created, nil))
		}
		if res.Created {
			fmt.Fprintf(w, "Created platform %s (provider %s) in %s\n", so.Platform, res.Platform.Infrastructure.MetalProvider, res.Platform.File())
			for _, m := range res.Missing {
				fmt.Fprintf(w, "Before provisioning, set %s there: %s\n", m.Field, m.Want)
			}
		} else {
			fmt.Fprintf(w, "Platform %s already exists with these settings\n", so.Platform)
		}
		return nil
	}
	ro.Platform = platform
	n, err := p.Register(ctx, ro)
	if err != nil {
		return err
	}
	if doc {
		plat, err := p.Store.Platform(ctx, platform)
		if err != nil {
			return err
		}
		return encode(w, e.Output, plasmanode.AddPlan(plat, false, n))
	}
	fmt.Fprintf(w, "Registered node %s (private IP %s) in %s\n", n, n.Network.PrivateIP, n.File())
	return nil
}

// Allocate applies o.Ops to a node, or shows its zones when there are
// none, printed as output says (table, json or yaml).
func Allocate(ctx context.Context, e Env, o plasmanode.AllocateOptions, output string) (err error) {
	defer func() { err = withHints(err, command{platform: o.Platform}) }()
	p, err := e.projectFor(ctx, output)
	if err != nil {
		return err
	}
	res, err := p.Allocate(ctx, o)
	if err != nil {
		return err
	}
	w := e.out()
	if output != "table" {
		return encode(w, output, res)
	}
	printZones(w, res.Hostname, res.Platform, res.Zones)
	if len(o.Ops) > 0 && !res.Modified {
		fmt.Fprintln(w, "(unchanged)")
	}
	return nil
}

// List prints the nodes o selects as v says.
func List(ctx context.Context, e Env, o plasmanode.ListOptions, v ListView) (err error) {
	defer func() { err = withHints(err, command{platform: o.Platform}) }()
	if err := v.check(); err != nil {
		return err
	}
	p, err := e.Project(ctx)
	if err != nil {
		return err
	}
	ns, err := p.List(ctx, o)
	var broken *plasmanode.BrokenNodesError
	if err != nil && !errors.As(err, &broken) {
		return err
	}
	var files []nodes.BrokenFile
	if broken != nil {
		files = broken.Files
	}
	if perr := v.print(e.out(), ns, pools(ctx, p, ns), files); perr != nil {
		return perr
	}
	return err // a broken file: exit 1, the list is incomplete
}

// Show prints a platform and its nodes, or one node.
func Show(ctx context.Context, e Env, name, output string) (err error) {
	defer func() { err = withHints(err, command{}) }()
	p, err := e.projectFor(ctx, output)
	if err != nil {
		return err
	}
	shown, err := p.Show(ctx, name)
	if err != nil {
		return err
	}
	if shown.Node != nil {
		return printNode(e.out(), output, shown.Node)
	}
	return printPlatform(e.out(), output, shown.Platform)
}

// Provision runs a provision and prints the plan and what it did; o's
// streams, prompter and plan report come from e.
func Provision(ctx context.Context, e Env, o plasmanode.ProvisionOptions) (err error) {
	defer func() { err = withHints(err, command{platform: o.Platform, approve: "--auto-approve"}) }()
	doc, err := e.document()
	if err != nil {
		return err
	}
	if doc && !o.DryRun {
		return cli.Usage(fmt.Errorf("--output %s needs --dry-run: a provision that applies reports its steps for people", e.Output))
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
	names := namesOf(ctx, p, o.Platform)
	if !doc {
		o.OnPlan = func(s tofu.Summary) { writeSummary(w, s, names) }
	}
	prog := newProgress(w)
	if o.Boot {
		o.OnProgress = prog.step
	}
	res, err := p.Provision(ctx, o)
	if errors.Is(err, plasmanode.ErrNoPools) || errors.Is(err, plasmanode.ErrCannotStart) {
		return cli.Usage(err)
	}
	var notReady *plasmanode.NotReadyError
	if err != nil && !errors.As(err, &notReady) {
		return err
	}
	if doc {
		return encode(w, e.Output, res.Plan)
	}
	defer prog.summary(res.Started)
	if res.Plan.Source == plasmanode.SourceOffline {
		writePlan(w, res.Plan)
	}
	switch {
	case o.DryRun:
		fmt.Fprintln(w, "Dry run: nothing applied or written")
	case res.Declined:
		return cli.ErrCancelled
	case !res.Applied:
		fmt.Fprintln(w, "No changes.")
	}
	for _, n := range res.Nodes {
		fmt.Fprintf(w, "Node %s: public IP %s, private IP %s, server %s (%s)\n", n, orNone(n.Network.PublicIP), orNone(n.Network.PrivateIP), orNone(n.ProviderMetadata.ServerID), n.File())
	}
	for _, h := range res.Removed {
		fmt.Fprintf(w, "Deleted server of node %s@%s and removed its node file\n", h, o.Platform)
	}
	for _, r := range res.Refreshed {
		fmt.Fprintln(w, refreshLine(r))
	}
	if notReady != nil {
		return notReady
	}
	return nil
}

// Join adopts a server into a pool and prints the plan and what it did;
// --server-id and --pool must have been given.
func Join(ctx context.Context, e Env, o plasmanode.JoinOptions, changed Changed) (err error) {
	defer func() { err = withHints(err, command{platform: o.Platform, approve: "--auto-approve"}) }()
	for _, f := range []string{"server-id", "pool"} {
		if !changed(f) {
			return cli.Usage(fmt.Errorf("--%s is required", f))
		}
	}
	doc, err := e.document()
	if err != nil {
		return err
	}
	if doc && !o.DryRun {
		return cli.Usage(fmt.Errorf("--output %s needs --dry-run: a join that applies reports its steps for people", e.Output))
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
	names := namesOf(ctx, p, o.Platform)
	if !doc {
		o.OnPlan = func(s tofu.Summary) { writeSummary(w, s, names) }
	}
	res, err := p.Join(ctx, o)
	if errors.Is(err, plasmanode.ErrUnknownPool) || errors.Is(err, providers.ErrInvalidServerID) {
		return cli.Usage(err)
	}
	if err != nil {
		return err
	}
	if doc {
		return encode(w, e.Output, res.Plan)
	}
	switch {
	case o.DryRun:
		fmt.Fprintf(w, "Dry run: server %s would join as %s@%s; nothing applied or written\n", o.ServerID, res.Hostname, o.Platform)
	case res.Declined:
		return cli.ErrCancelled
	case res.Node != nil:
		n := res.Node
		fmt.Fprintf(w, "Joined server %s as node %s: public IP %s, private IP %s (%s)\n", o.ServerID, n, orNone(n.Network.PublicIP), orNone(n.Network.PrivateIP), n.File())
	}
	return nil
}

// Destroy destroys a platform's servers and prints what goes, before it
// asks, and what it removed.
func Destroy(ctx context.Context, e Env, o plasmanode.DestroyOptions) (err error) {
	defer func() { err = withHints(err, command{platform: o.Platform, approve: "--force"}) }()
	doc, err := e.document()
	if err != nil {
		return err
	}
	p, err := e.Project(ctx)
	if err != nil {
		return err
	}
	names := namesOf(ctx, p, o.Platform)
	w := e.out()
	o.Prompter = e.prompter()
	var closeLog func() error
	o.Stdout, o.Stderr, closeLog = e.tofuStreams()
	defer func() { err = errors.Join(err, closeLog()) }()
	planned := false
	o.OnPlan = func(pl plasmanode.DestroyPlan) {
		planned = true
		writeDestroyPlan(e.planw(doc), pl)
	}
	res, err := p.Destroy(ctx, o)
	if err != nil {
		return err
	}
	if res.Declined {
		return cli.ErrCancelled
	}
	if doc {
		return encode(w, e.Output, res.Plan)
	}
	if o.DryRun && planned {
		fmt.Fprintln(w, "Dry run: nothing changed")
		return nil
	}
	if !planned {
		fmt.Fprintf(w, "Platform %s has no servers to destroy\n", o.Platform)
	}
	if res.Destroyed && !res.Summary.Empty() {
		writeSummary(w, res.Summary, names)
	}
	for _, h := range res.Removed {
		fmt.Fprintf(w, "Removed node %s@%s\n", h, o.Platform)
	}
	for _, h := range res.Skipped {
		fmt.Fprintf(w, "Kept node %s@%s: its zones match no pool, its server was not destroyed\n", h, o.Platform)
	}
	return nil
}

// orNone is s, or "none" when it is empty, for lines such as "public IP
// none, private IP 10.0.0.5".
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
