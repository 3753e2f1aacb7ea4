package plasmanode

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/pxe/events"
)

// ErrCannotReinstall: reinstall was asked of a node whose provider cannot
// install its server again (every provider but pxe), or of a node with no
// server.
var ErrCannotReinstall = errors.New("provider cannot reinstall its servers")

// PromptReinstall is the question reinstall asks.
const PromptReinstall = `Reinstall this machine? It installs again over its boot disk; its data pools are kept. Type "yes" to confirm, anything else to abort: `

// PromptReinstallWipe is the question reinstall asks with WipeData.
const PromptReinstallWipe = `Reinstall this machine and WIPE its data pools? It installs again over its boot disk, and its data pools are created anew, destroying what they hold. Type "yes" to confirm, anything else to abort: `

// ReinstallOptions describe the reinstall of one node's machine.
type ReinstallOptions struct {
	// Hostname of the node. Required.
	Hostname string
	// Platform holding the node. Default: the one platform that has a
	// node of that name.
	Platform string
	// Force skips the typed "yes" confirmation.
	Force bool
	// WipeData has the install create the node's data pools anew over
	// what their disks hold. False (the default) keeps them: the new
	// install's first-boot script imports the pools it finds.
	WipeData bool
	// Prompter asks for confirmation; nil without Force refuses, before
	// anything changes, with [ErrNoPrompter].
	Prompter Prompter
	// OnConfirm, when set, is told what is about to be reinstalled before
	// Prompter asks (and before anything happens under Force).
	OnConfirm func(node, serverID string)
	// Wait follows the machine until it is installed again, WaitTimeout
	// passes, or ctx ends; then the node file is refreshed with what its
	// installer reported, as [Project.Refresh] does. Only a provider's
	// service reports the install (pxe: node-provisioner's API): at a
	// local state folder the machine is re-armed and not followed.
	Wait bool
	// WaitTimeout bounds Wait. Default: [DefaultWaitTimeout].
	WaitTimeout time.Duration
	// OnProgress, when set, is given each step of the machine.
	OnProgress func(providers.Progress)
	// ProvisionerDir is node-provisioner's state folder of a pxe
	// platform. Empty: [Project.ProvisionerDir]'s choice.
	ProvisionerDir string
}

// ReinstallResult is what [Project.Reinstall] did.
type ReinstallResult struct {
	// Hostname and Platform name the node.
	Hostname, Platform string
	// Declined reports that the person declined; nothing changed.
	Declined bool
	// Started reports that the machine was re-armed (and booted where its
	// provider could); Ready that it was seen installed again.
	Started, Ready bool
	// Refreshed is the node file's refresh after the install, when Wait.
	Refreshed []Refreshed
}

// Reinstall installs a node's machine again: after a typed "yes" unless
// Force, its provider re-arms it (pxe: a new one-shot registration with a
// new root password; through node-provisioner's API a machine with a BMC
// is booted into the installer, PXE once and a power cycle) and, with
// Wait, follows it until it is installed again, then refreshes its node
// file.
//
// Errors: [nodes.ErrNodeNotFound] and [nodes.ErrAmbiguous] (through the
// store), [ErrCannotReinstall], [ErrNoPrompter], a [*NotReadyError] when
// the machine could not be started or was not installed in time, and the
// provider's.
func (p *Project) Reinstall(ctx context.Context, o ReinstallOptions) (ReinstallResult, error) {
	res := ReinstallResult{Hostname: o.Hostname, Platform: o.Platform}
	var err error
	if res.Platform, err = p.platformOf(ctx, o.Platform, o.Hostname); err != nil {
		return res, err
	}
	plat, err := p.Store.Platform(ctx, res.Platform)
	if err != nil {
		return res, err
	}
	n, err := p.Store.Node(ctx, res.Platform, o.Hostname)
	if err != nil {
		return res, err
	}
	node := n.String()
	if isManual(plat) {
		return res, fmt.Errorf("reinstall %s: the manual provider: %w: only a bare-metal (pxe) node's machine is installed again", node, ErrCannotReinstall)
	}
	prov, err := p.provider(plat, "reinstall")
	if err != nil {
		return res, err
	}
	ri, ok := prov.(providers.Reinstaller)
	if !ok || n.ProviderMetadata.ServerID == "" {
		return res, fmt.Errorf("reinstall %s: provider %s: %w: only a bare-metal (pxe) node's machine is installed again", node, prov.Name(), ErrCannotReinstall)
	}
	if err := canAsk(o.Prompter, o.Force, "reinstall "+node); err != nil {
		return res, err
	}
	at, err := p.Provisioner(plat, o.ProvisionerDir)
	if err != nil {
		return res, err
	}
	if o.OnConfirm != nil {
		o.OnConfirm(node, n.ProviderMetadata.ServerID)
	}
	if !o.Force {
		q := PromptReinstall
		if o.WipeData {
			q = PromptReinstallWipe
		}
		ok, err := ask(ctx, o.Prompter, q, "yes")
		if err != nil || !ok {
			res.Declined = !ok
			return res, err
		}
	}
	return p.reinstall(ctx, o, ri, at, res)
}

// reinstall is [Project.Reinstall] once confirmed. Only a provider's
// service (node-provisioner's API) reports the install to follow: at a
// local folder the machine is re-armed and left to its next netboot.
func (p *Project) reinstall(ctx context.Context, o ReinstallOptions, ri providers.Reinstaller, at providers.Location, res ReinstallResult) (ReinstallResult, error) {
	wait := o.Wait && at.Remote != nil
	wctx, cancel := waitContext(ctx, wait, o.WaitTimeout)
	defer cancel()
	var failed []string
	fn := func(pr providers.Progress) {
		switch pr.Step {
		case events.Failed:
			failed = append(failed, pr.Hostname)
		case events.Started:
			res.Started = true
		}
		if o.OnProgress != nil {
			o.OnProgress(pr)
		}
	}
	notReady, err := ri.Reinstall(wctx, at, []string{o.Hostname}, providers.ReinstallOptions{Wait: wait, WipeData: o.WipeData}, fn)
	if !res.Started && len(failed) == 0 && err != nil {
		return res, err // refused before the machine was re-armed
	}
	res.Ready = wait && len(notReady) == 0
	if res.Ready {
		ref, rerr := p.Refresh(ctx, RefreshOptions{Platform: res.Platform, ProvisionerDir: o.ProvisionerDir})
		if rerr != nil {
			p.log.Warn("node file not refreshed with the installed address; run plasma-node refresh", "platform", res.Platform, "err", rerr)
		}
		for _, r := range ref {
			if host, _, _ := strings.Cut(r.Node, "@"); host == o.Hostname {
				res.Refreshed = append(res.Refreshed, r)
			}
		}
	}
	if len(failed) == 0 && (res.Ready || (!wait && err == nil)) {
		return res, nil
	}
	e := &NotReadyError{Platform: res.Platform, NotReady: notReady, Failed: failed, Err: err}
	if wait && wctx.Err() != nil {
		e.Interrupted = ctx.Err() != nil
		e.TimedOut = !e.Interrupted
		e.Err = withoutContextErrors(e.Err)
	}
	return res, e
}
