package launchr

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	launchrctl "github.com/launchrctl/launchr"
	"github.com/launchrctl/launchr/pkg/action"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/internal/cli"
	"github.com/plasmactl/plasma-node/internal/nodecmd"
)

// actionFiles are the action definitions, actions/<name>/<name>.yaml, one
// per action node:<name>.
//
//go:embed actions/*/*.yaml
var actionFiles embed.FS

func init() {
	launchrctl.RegisterPlugin(&Plugin{})
}

// Plugin is the [launchrctl.Plugin] providing the node:* actions.
type Plugin struct{}

var _ launchrctl.ActionDiscoveryPlugin = (*Plugin)(nil)

// PluginInfo implements [launchrctl.Plugin].
func (p *Plugin) PluginInfo() launchrctl.PluginInfo {
	return launchrctl.PluginInfo{Weight: 10}
}

// run executes one action: it reads the action's input into a request
// and calls internal/nodecmd.
type run func(ctx context.Context, e nodecmd.Env, in *action.Input) error

// runs maps each action name (node:<name>) to what it does.
var runs = map[string]run{
	"add": func(ctx context.Context, e nodecmd.Env, in *action.Input) error {
		so := plasmanode.ScaffoldOptions{Provider: opt(in, "provider"), Domain: opt(in, "domain"), PrivateNetwork: opt(in, "private-network")}
		ro := plasmanode.RegisterOptions{
			Hostname: opt(in, "hostname"), PublicIP: opt(in, "public-ip"), PrivateIP: opt(in, "private-ip"),
			Zones: optSlice(in, "zone"), IPPool: opt(in, "ip-pool"),
		}
		return nodecmd.Add(ctx, e, arg(in, "platform"), so, ro, in.IsOptChanged)
	},
	"allocate": func(ctx context.Context, e nodecmd.Env, in *action.Input) error {
		o := plasmanode.AllocateOptions{Hostname: arg(in, "hostname"), Platform: opt(in, "env"), Ops: argSlice(in, "operations")}
		return nodecmd.Allocate(ctx, e, o, opt(in, "output"))
	},
	"list": func(ctx context.Context, e nodecmd.Env, in *action.Input) error {
		o := plasmanode.ListOptions{Platform: arg(in, "platform"), Zone: opt(in, "zone")}
		return nodecmd.List(ctx, e, o, nodecmd.ListView{Output: opt(in, "output"), NoHeaders: flag(in, "no-headers"), SortBy: opt(in, "sort-by")})
	},
	"show": func(ctx context.Context, e nodecmd.Env, in *action.Input) error {
		return nodecmd.Show(ctx, e, arg(in, "name"), opt(in, "output"))
	},
	"provision": func(ctx context.Context, e nodecmd.Env, in *action.Input) error {
		o := plasmanode.ProvisionOptions{
			Platform: arg(in, "platform"), Specs: optSlice(in, "zone"), DryRun: flag(in, "dry-run"),
			AutoApprove: flag(in, "auto-approve"), AllowDestructive: flag(in, "allow-destructive-update"), AllowDelete: flag(in, "allow-delete"),
			TofuOptions:  plasmanode.TofuOptions{TofuPath: opt(in, "tofu")},
			HardwareFile: opt(in, "hardware"),
			Boot:         flag(in, "boot"), Wait: flag(in, "wait"),
		}
		timeout, err := time.ParseDuration(opt(in, "timeout"))
		if err != nil {
			return cli.Usage(fmt.Errorf("--timeout %q: want a duration such as 45m", opt(in, "timeout")))
		}
		o.WaitTimeout = timeout
		if err := nodecmd.CheckBoot(&o, in.IsOptChanged("wait")); err != nil {
			return err
		}
		return nodecmd.Provision(ctx, e, o)
	},
	"join": func(ctx context.Context, e nodecmd.Env, in *action.Input) error {
		o := plasmanode.JoinOptions{
			Platform: arg(in, "platform"), ServerID: opt(in, "server-id"), Pool: opt(in, "pool"), Hostname: opt(in, "hostname"),
			DryRun: flag(in, "dry-run"), AutoApprove: flag(in, "auto-approve"), AllowDestructive: flag(in, "allow-destructive-update"),
			TofuOptions: plasmanode.TofuOptions{TofuPath: opt(in, "tofu")},
		}
		return nodecmd.Join(ctx, e, o, in.IsOptChanged)
	},
	"register": func(ctx context.Context, e nodecmd.Env, in *action.Input) error {
		ro := plasmanode.RegisterOptions{
			Platform: arg(in, "platform"), Hostname: opt(in, "hostname"), PublicIP: opt(in, "public-ip"), PrivateIP: opt(in, "private-ip"),
			Zones: optSlice(in, "zone"), IPPool: opt(in, "ip-pool"),
		}
		return nodecmd.Register(ctx, e, ro, in.IsOptChanged)
	},
	"deallocate": func(ctx context.Context, e nodecmd.Env, in *action.Input) error {
		o := plasmanode.DeallocateOptions{Hostname: arg(in, "hostname"), Platform: opt(in, "env"), Zones: argSlice(in, "zones"), Recursive: flag(in, "recursive")}
		return nodecmd.Deallocate(ctx, e, o, opt(in, "output"))
	},
	"query": func(ctx context.Context, e nodecmd.Env, in *action.Input) error {
		return nodecmd.Query(ctx, e, plasmanode.QueryOptions{Zone: arg(in, "zone"), Platform: opt(in, "env")}, opt(in, "output"))
	},
	"validate": func(ctx context.Context, e nodecmd.Env, in *action.Input) error {
		return nodecmd.Validate(ctx, e, arg(in, "name"), opt(in, "output"))
	},
	"destroy": func(ctx context.Context, e nodecmd.Env, in *action.Input) error {
		o := plasmanode.DestroyOptions{Platform: arg(in, "platform"), Force: flag(in, "force"), DryRun: flag(in, "dry-run"), KeepNodes: flag(in, "keep-nodes"), TofuOptions: plasmanode.TofuOptions{TofuPath: opt(in, "tofu")}}
		return nodecmd.Destroy(ctx, e, o)
	},
	"delete": func(ctx context.Context, e nodecmd.Env, in *action.Input) error {
		o := plasmanode.DeleteOptions{Hostname: arg(in, "hostname"), Platform: opt(in, "env"), Force: flag(in, "force"), DryRun: flag(in, "dry-run"),
			KeepServer: flag(in, "keep-server"), TofuOptions: plasmanode.TofuOptions{TofuPath: opt(in, "tofu")}}
		return nodecmd.Delete(ctx, e, o)
	},
	"reinstall": func(ctx context.Context, e nodecmd.Env, in *action.Input) error {
		o := plasmanode.ReinstallOptions{Hostname: arg(in, "hostname"), Platform: opt(in, "env"), Force: flag(in, "force"), WipeData: flag(in, "wipe-data"), Wait: flag(in, "wait")}
		timeout, err := time.ParseDuration(opt(in, "timeout"))
		if err != nil {
			return cli.Usage(fmt.Errorf("--timeout %q: want a duration such as 45m", opt(in, "timeout")))
		}
		o.WaitTimeout = timeout
		return nodecmd.Reinstall(ctx, e, o)
	},
}

// DiscoverActions implements [launchrctl.ActionDiscoveryPlugin]: one action
// per embedded definition, run by a [action.NewFnRuntime].
func (p *Plugin) DiscoverActions(context.Context) ([]*action.Action, error) {
	files, err := fs.Glob(actionFiles, "actions/*/*.yaml")
	if err != nil {
		return nil, err
	}
	var out []*action.Action
	for _, f := range files {
		name := strings.TrimSuffix(path.Base(f), ".yaml")
		fn, ok := runs[name]
		if !ok {
			return nil, fmt.Errorf("action file %s: no action node:%s", f, name)
		}
		b, err := actionFiles.ReadFile(f)
		if err != nil {
			return nil, err
		}
		a := action.NewFromYAML("node:"+name, b)
		a.SetRuntime(action.NewFnRuntime(func(ctx context.Context, a *action.Action) error {
			return exitError(fn(ctx, env(a), a.Input()))
		}))
		out = append(out, a)
	}
	return out, nil
}

// env is what nodecmd needs, from the action's input streams and runtime
// logger (Launchr's -v and --log-format).
func env(a *action.Action) nodecmd.Env {
	in := a.Input()
	streams := in.Streams()
	e := nodecmd.Env{Dir: opt(in, "dir"), ProvisionerDir: opt(in, "provisioner-dir"), TofuLog: opt(in, "tofu-log"), Output: opt(in, "output"),
		Stdin: streams.In(), Stdout: streams.Out(), Stderr: streams.Err()}
	// Launchr's streams mask secrets and so hold back a line until its
	// newline: a question waiting for its answer on the same line would
	// never show. The questions are fixed text, so they go to stderr as
	// is (when Launchr is not quiet).
	if launchrctl.EnvVarQuietMode.Get() != "1" {
		_, _, e.Prompts = launchrctl.StdInOutErr()
	}
	if r, ok := a.Runtime().(action.RuntimeLoggerAware); ok && r.Log() != nil {
		e.Logger = r.Log().Slog
	} else if l := launchrctl.Log(); l != nil {
		e.Logger = l.Slog
	}
	// Launchr's -v, as plasma-node's: tofu's own output too.
	e.Verbose = e.Logger != nil && e.Logger.Enabled(context.Background(), slog.LevelInfo)
	switch {
	case e.Logger != nil && e.Logger.Enabled(context.Background(), slog.LevelWarn):
	case launchrctl.EnvVarQuietMode.Get() == "1":
		e.Logger = slog.New(slog.DiscardHandler)
	default:
		// Launchr's log is off by default; a warning (a zone new to the
		// platform, a pool that grew) still reaches the user, once, on
		// the action's stderr, as plasma-node says it.
		e.Logger = slog.New(cli.NewVoice(e.Stderr, filepath.Base(os.Args[0]), slog.LevelWarn))
	}
	return e
}

// exitError keeps err's message and gives Launchr plasma-node's exit code
// for it: 2 for bad input, 1 for a failure.
func exitError(err error) error {
	if err == nil {
		return nil
	}
	return launchrctl.NewExitError(nodecmd.ExitCode(err), err.Error())
}

func arg(in *action.Input, name string) string {
	s, _ := in.Arg(name).(string)
	return s
}

func opt(in *action.Input, name string) string {
	s, _ := in.Opt(name).(string)
	return s
}

func flag(in *action.Input, name string) bool {
	b, _ := in.Opt(name).(bool)
	return b
}

func optSlice(in *action.Input, name string) []string {
	v, _ := in.Opt(name).([]any)
	return action.CastSliceAnyToTyped[string](v)
}

func argSlice(in *action.Input, name string) []string {
	v, _ := in.Arg(name).([]any)
	return action.CastSliceAnyToTyped[string](v)
}
