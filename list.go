package plasmanode

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/zones"
)

// ListOptions select nodes.
type ListOptions struct {
	// Platform limits the list to one platform. Default: all.
	Platform string
	// Zone keeps the nodes allocated to the zone or to a zone below it, as
	// plasmactl-zone's zone:show finds them. Default: all.
	Zone string
	// ProvisionerDir is node-provisioner's state folder, read for the
	// InstallState of bare-metal (pxe) nodes. Empty: each platform's
	// [Project.ProvisionerDir].
	ProvisionerDir string
}

// List returns the selected nodes, sorted by platform, then hostname.
// A node made by a [providers.Direct] provider (pxe) has its
// InstallState from the provider's records: pending, consumed,
// installed, [StateUnregistered] when it has none, or [StateUnknown]
// when they cannot be read (logged; the list does not fail for it).
//
// An installed node whose file differs from what its installer reported
// (its address, its host keys) is warned about: [Project.Refresh]
// writes the report; List writes nothing.
//
// Node files that cannot be read do not stop it, nor, over all
// platforms, a platform.yaml that cannot be read: the other nodes are
// returned with a [*BrokenNodesError] naming them. Over all platforms,
// a project folder without platforms/ is an error wrapping
// [nodes.ErrNoPlatformsDir].
func (p *Project) List(ctx context.Context, o ListOptions) ([]*nodes.Node, error) {
	ns, err := p.list(ctx, o)
	var broken *BrokenNodesError
	if err != nil && !errors.As(err, &broken) {
		return nil, err
	}
	if serr := p.installStates(ctx, ns, o.ProvisionerDir); serr != nil {
		return ns, serr
	}
	p.warnStale(ctx, ns, o.ProvisionerDir)
	if broken != nil {
		return ns, broken
	}
	return ns, nil
}

func (p *Project) list(ctx context.Context, o ListOptions) ([]*nodes.Node, error) {
	var zone string
	if o.Zone != "" {
		z, err := p.zone(o.Zone)
		if err != nil {
			return nil, err
		}
		zone = z
	}
	plats := []string{o.Platform}
	if o.Platform == "" {
		var err error
		if plats, err = p.Store.Platforms(ctx); err != nil {
			return nil, err
		}
		if len(plats) == 0 {
			if err := p.Store.CheckPlatformsDir(); err != nil {
				return nil, err
			}
		}
	}
	p.warnUnknownKeys(ctx, plats...)
	var (
		all    []*nodes.Node
		broken []nodes.BrokenFile
	)
	for _, pl := range plats {
		ns, b, err := p.Store.ScanNodes(ctx, pl)
		if err != nil && o.Platform == "" && ctx.Err() == nil {
			// One broken platform.yaml is a row, as a broken node file is.
			b, err = []nodes.BrokenFile{{Platform: pl, File: p.Store.PlatformPath(pl), Err: err}}, nil
		}
		if err != nil {
			return nil, err
		}
		all, broken = append(all, ns...), append(broken, b...)
	}
	var err error
	if len(broken) > 0 {
		err = &BrokenNodesError{Files: broken}
	}
	if zone == "" {
		return all, err
	}
	var out []*nodes.Node
	for _, n := range all {
		for _, nz := range n.Zones {
			if zones.Contains(zone, nz) {
				out = append(out, n)
				break
			}
		}
	}
	return out, err
}

// BrokenNodesError is the error of [Project.List] when node files could
// not be read: the nodes of the other files are returned with it, so one
// malformed file does not hide the rest.
type BrokenNodesError struct {
	// Files are the files that could not be read, with why.
	Files []nodes.BrokenFile
}

// Error says how many files could not be read and why, each naming its
// file and line.
func (e *BrokenNodesError) Error() string {
	msgs := make([]string, len(e.Files))
	for i, f := range e.Files {
		msgs[i] = f.Err.Error()
	}
	word := "files"
	if len(e.Files) == 1 {
		word = "file"
	}
	return fmt.Sprintf("%d node %s could not be read: %s", len(e.Files), word, strings.Join(msgs, "; "))
}

// Entries returns why each file could not be read, one per file.
func (e *BrokenNodesError) Entries() []string {
	msgs := make([]string, len(e.Files))
	for i, f := range e.Files {
		msgs[i] = f.Err.Error()
	}
	return msgs
}

// Summary says how many files could not be read.
func (e *BrokenNodesError) Summary() string {
	word := "files"
	if len(e.Files) == 1 {
		word = "file"
	}
	return fmt.Sprintf("%d node %s could not be read; the others are listed", len(e.Files), word)
}

// PlatformView is a platform with its nodes.
type PlatformView struct {
	// Platform is the platform as read from its platform.yaml.
	Platform *nodes.Platform `json:"platform" yaml:"platform"`
	// Nodes are the platform's nodes, sorted by hostname.
	Nodes []*nodes.Node `json:"nodes" yaml:"nodes"`
}

// Shown is what [Project.Show] found: a platform or a node.
type Shown struct {
	// Platform is set when the name is a platform's.
	Platform *PlatformView
	// Node is set when the name is a node's and not a platform's.
	Node *nodes.Node
}

// Show finds name as a platform, else as a node in any platform (a
// platform wins when both exist); bare-metal nodes have their
// InstallState as [Project.List] gives it. Neither is an error wrapping
// [nodes.ErrNodeNotFound] that says so.
func (p *Project) Show(ctx context.Context, name string) (Shown, error) {
	plat, err := p.Store.Platform(ctx, name)
	switch {
	case err == nil:
		p.warnUnknownKeys(ctx, name)
		ns, err := p.Store.Nodes(ctx, name)
		if err != nil {
			return Shown{}, err
		}
		err = p.installStates(ctx, ns, "")
		if err == nil {
			p.warnStale(ctx, ns, "")
		}
		return Shown{Platform: &PlatformView{Platform: plat, Nodes: ns}}, err
	case !errors.Is(err, nodes.ErrPlatformNotFound):
		return Shown{}, err
	}
	n, err := p.Store.FindNode(ctx, name)
	if errors.Is(err, nodes.ErrNodeNotFound) {
		if b := p.brokenNodeFile(ctx, name); b != nil {
			return Shown{}, fmt.Errorf("node %q: its file %s cannot be read: %w", name, p.Store.Rel(b.File), b.Err)
		}
		return Shown{}, fmt.Errorf("%q is neither a platform nor a node: %w", name, nodes.ErrNodeNotFound)
	}
	if err != nil {
		return Shown{}, err
	}
	err = p.installStates(ctx, []*nodes.Node{n}, "")
	if err == nil {
		p.warnStale(ctx, []*nodes.Node{n}, "")
	}
	return Shown{Node: n}, err
}

// brokenNodeFile returns the node file named hostname.yaml, in any
// platform, that cannot be read; nil when there is none.
func (p *Project) brokenNodeFile(ctx context.Context, hostname string) *nodes.BrokenFile {
	plats, _ := p.Store.Platforms(ctx)
	for _, pl := range plats {
		_, broken, err := p.Store.ScanNodes(ctx, pl)
		if err != nil {
			continue
		}
		for _, b := range broken {
			if filepath.Base(b.File) == hostname+".yaml" {
				return &b
			}
		}
	}
	return nil
}
