package daemon

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/enrol"
	"github.com/plasmactl/plasma-node/pxe/netboot"
	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store"
)

// enroller returns a discovery window's enrolment: the rules of stores
// make registrations there (a rule's BMC naming its site secret, read
// when the BMC is used), with the site's settings (site over stateDir's site.json), and
// say what they did as a [netboot.Enrolment]; and the preview of the
// inbox the status page shows: `rule test`'s decisions
// ([enrol.PreviewRecords]) as Enrolments, by machine.
func enroller(ctx context.Context, stores *store.Stores, stateDir string, site registry.Site, log *slog.Logger) (enrolFunc, previewFunc, error) {
	secrets, err := stores.Secrets(ctx)
	if err != nil {
		return nil, nil, err
	}
	siteSecrets, err := stores.SiteSecrets(ctx)
	if err != nil {
		return nil, nil, err
	}
	file, err := registry.LoadSiteIfExists(filepath.Join(stateDir, registry.SiteFileName))
	if err != nil {
		return nil, nil, err
	}
	regs := stores.Registrations()
	e := &enrol.Enroller{
		Rules:         stores.Rules(),
		Registrations: regs,
		Register: func(ctx context.Context, r registry.Registration) error {
			_, err := registrar.Register(ctx, regs, secrets, r, registry.RegisterOptions{}, "")
			return err
		},
		Secrets: siteSecrets,
		Site:    site.Merge(file),
		Events:  stores.Events(),
		Logger:  log,
	}
	enrolOne := func(ctx context.Context, rec discovery.Record) netboot.Enrolment {
		d, err := e.Enrol(ctx, rec)
		return enrolment(d, err)
	}
	preview := func(ctx context.Context, recs []discovery.Record) (map[string]netboot.Enrolment, error) {
		st, err := e.Rules.Read(ctx)
		if err != nil {
			return nil, err
		}
		ds, err := enrol.PreviewRecords(ctx, st, regs, recs, e.Site, time.Now())
		if err != nil {
			return nil, err
		}
		out := make(map[string]netboot.Enrolment, len(ds))
		for _, d := range ds {
			out[d.Machine] = enrolment(d, d.Err)
		}
		return out, nil
	}
	return enrolOne, preview, nil
}

// enrolFunc and previewFunc are a discovery window's enrolment and
// preview ([pxe.Config] Enrol and EnrolPreview).
type (
	enrolFunc   = func(context.Context, discovery.Record) netboot.Enrolment
	previewFunc = func(context.Context, []discovery.Record) (map[string]netboot.Enrolment, error)
)

// enrolment is what an enrolment's decision and error say to the window.
func enrolment(d enrol.Decision, err error) netboot.Enrolment {
	en := netboot.Enrolment{Outcome: netboot.EnrolEnrolled, Rule: d.Rule, Node: d.Name, Install: d.Mode == enrol.ModeInstall}
	switch {
	case err == nil:
		return en
	case errors.Is(err, enrol.ErrNoRule):
		en.Outcome = netboot.EnrolNoRule
	default:
		en.Outcome = netboot.EnrolRefused
	}
	en.Node, en.Install, en.Reason = "", false, err.Error()
	return en
}
