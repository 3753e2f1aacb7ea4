package plasmanode

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/plasmactl/plasma-node/internal/usage"
	"github.com/plasmactl/plasma-node/ipam"
	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/providers/builtin"
	"github.com/plasmactl/plasma-node/zones"
)

// topologyFile is the optional zone tree at the project root, in
// plasmactl-zone's format.
const topologyFile = "topology.yaml"

// Errors callers branch on, beside those of packages nodes, zones, ipam
// and providers.
var (
	// ErrConflict: a platform exists with settings other than those asked.
	ErrConflict = usage.New("conflicting settings")
	// ErrInvalidAddress: an IP address that does not parse; the same
	// error as [ipam.ErrInvalidAddress].
	ErrInvalidAddress = ipam.ErrInvalidAddress
)

// Options configure a Project. The zero value is ready to use.
type Options struct {
	// Logger receives what the operations report; nil discards it.
	Logger *slog.Logger
	// ProvisionerDir is node-provisioner's state folder for every pxe
	// platform, when an operation's options name none; empty leaves the
	// choice to [Project.ProvisionerDir].
	ProvisionerDir string
	// Providers are the providers the project's platforms may name in
	// infrastructure.metal_provider; nil means the built-in ones,
	// [builtin.Set]. A name the set lacks is an error that is
	// [providers.ErrUnknown].
	Providers *providers.Set
}

// Project is a folder holding platforms/ and, optionally, topology.yaml.
// Its methods are the operations of plasma-node.
type Project struct {
	// Store reads and writes the project's node and platform files.
	Store *nodes.Store
	// Topology is the parsed topology.yaml, or nil when there is none, in
	// which case every well-formed zone is accepted.
	Topology *zones.Topology

	log            *slog.Logger
	provisionerDir string
	providers      *providers.Set
}

// ErrProjectDir is wrapped by [OpenProject]'s error for a project folder
// that does not exist or is not a folder: bad input, nothing is read.
var ErrProjectDir = usage.New("no project folder")

// OpenProject opens the project folder dir, reading topology.yaml when it
// exists. A malformed topology.yaml is an error.
func OpenProject(ctx context.Context, dir string, opts Options) (*Project, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("project folder %s: %w: %w", dir, ErrProjectDir, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("project folder %s: %w: not a directory", dir, ErrProjectDir)
	}
	topo, err := zones.LoadTopology(filepath.Join(dir, topologyFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	set := opts.Providers
	if set == nil {
		set = builtin.Set()
	}
	return &Project{Store: nodes.Open(dir, nodes.Options{Logger: log}), Topology: topo, log: log, provisionerDir: opts.ProvisionerDir,
		providers: set}, nil
}

// Providers returns the providers the project's platforms may name:
// [Options.Providers], or the built-in ones.
func (p *Project) Providers() *providers.Set {
	return p.providers
}

// FindProjectDir returns the nearest folder at or above start that holds
// platforms/, or start itself when none does.
func FindProjectDir(start string) (string, error) {
	abs, err := filepath.Abs(start)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if st, err := os.Stat(filepath.Join(d, nodes.PlatformsDir)); err == nil && st.IsDir() {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return abs, nil
		}
	}
}

// zone normalises a zone path and checks it against the topology.
func (p *Project) zone(z string) (string, error) {
	n, err := zones.Normalize(z)
	if err != nil {
		return "", err
	}
	if err := p.Topology.Check(n); err != nil {
		return "", err
	}
	return n, nil
}

// lock takes a platform's lock for an operation that waits its turn.
func (p *Project) lock(ctx context.Context, platform, op string) (func(), error) {
	return p.takeLock(ctx, platform, op, true)
}

// takeLock takes a platform's lock for op. With wait it waits its turn,
// up to nodes.LockTimeout; else a run in progress fails it at once with
// nodes.ErrLocked.
func (p *Project) takeLock(ctx context.Context, platform, op string, wait bool) (func(), error) {
	if wait {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, nodes.LockTimeout)
		defer cancel()
	}
	l, err := p.Store.Lock(ctx, platform, "plasma-node "+op, wait)
	if err != nil {
		return nil, err
	}
	return func() { l.Unlock() }, nil
}

// lockPlatform takes a platform's lock for op (see takeLock for wait)
// and reads its platform.yaml. The caller calls unlock when err is nil.
func (p *Project) lockPlatform(ctx context.Context, platform, op string, wait bool) (plat *nodes.Platform, unlock func(), err error) {
	unlock, err = p.takeLock(ctx, platform, op, wait)
	if err != nil {
		return nil, nil, err
	}
	plat, err = p.Store.Platform(ctx, platform)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	return plat, unlock, nil
}

// openPlatform is lockPlatform for an operation that changes servers or
// nodes: it refuses a platform.yaml with unknown keys ([ErrUnknownKey])
// or a setting that breaks its rule (checkPlatform).
func (p *Project) openPlatform(ctx context.Context, platform, op string, wait bool) (*nodes.Platform, func(), error) {
	plat, unlock, err := p.lockPlatform(ctx, platform, op, wait)
	if err != nil {
		return nil, nil, err
	}
	if err := errors.Join(refuseUnknownKeys(plat), p.refusePlatform(plat)); err != nil {
		unlock()
		return nil, nil, err
	}
	return plat, unlock, nil
}

// IsUsageError reports whether err comes from bad input (a malformed
// zone, spec, operation, name, address or file, an unknown platform,
// node or provider, a conflict, an [OptionError] or
// [OptionNeededError]) rather than from a failure: the CLIs exit 2 for
// these. Bad input is an error, or one it wraps, with a method
// UsageError() bool returning true: the sentinels of this module that
// mean bad input have it, and so may an embedder's errors.
func IsUsageError(err error) bool { return usage.Is(err) }

// platformOf is platform, or, when it is empty, the platform of the one
// node named hostname.
func (p *Project) platformOf(ctx context.Context, platform, hostname string) (string, error) {
	if platform != "" {
		return platform, nil
	}
	n, err := p.Store.FindNode(ctx, hostname)
	if err != nil {
		return "", err
	}
	return n.Platform, nil
}
