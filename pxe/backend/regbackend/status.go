package regbackend

import (
	"slices"

	"github.com/plasmactl/plasma-node/answer"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registry"

	"context"
	"strings"
	"time"
)

// Status lists every registration of reg, pending ones first, each
// sorted by name, with what the event store evs holds of its install and
// the installer's report that ins keeps (none when ins is nil).
func Status(ctx context.Context, reg registry.Registrations, evs events.Store, ins registry.Installs) ([]backend.Node, error) {
	installed, err := installReports(ctx, evs)
	if err != nil {
		return nil, err
	}
	return status(ctx, reg, installed, ins)
}

// status is [Status] with the installed nodes known.
func status(ctx context.Context, reg registry.Registrations, installed map[string]backend.Event, ins registry.Installs) ([]backend.Node, error) {
	reports := map[string]registry.Install{}
	if ins != nil {
		l, err := ins.List(ctx)
		if err != nil {
			return nil, err
		}
		for _, in := range l {
			reports[in.Name] = in
		}
	}
	pending, broken, err := reg.Scan(ctx)
	if err != nil {
		return nil, err
	}
	consumed, err := reg.Consumed(ctx)
	if err != nil {
		return nil, err
	}
	problems := map[string][]string{}
	for _, c := range registry.Collisions(pending) {
		for _, n := range c.Names {
			problems[n] = append(problems[n], c.String())
		}
	}
	out := []backend.Node{}
	for i, r := range append(pending, consumed...) {
		s := backend.Node{Name: r.Name, State: backend.StatePending, MACs: nonNilStrings(r.MACs), BootDisk: r.BootDisk.String(), Pools: []string{}, Serial: r.Serial, UUID: r.UUID, Created: r.Created}
		if r.Network != nil {
			s.StaticAddress = r.Network.CIDR
		}
		s.BootMethod, s.MediaAnswer = string(r.BootMethod), string(r.MediaAnswer)
		for _, p := range r.Pools {
			s.Pools = append(s.Pools, p.String())
		}
		if i < len(pending) && len(problems[r.Name]) > 0 {
			s.Problem = strings.Join(problems[r.Name], "; ") + ": the machine is refused until one pin is removed"
		}
		if c := r.Consumed; c != nil {
			t := c.Time
			s.State, s.ConsumedAt, s.InstallIP = backend.StateConsumed, &t, c.ClientIP
			if c.Undelivered {
				s.State = backend.StateUndelivered
			}
			if e, ok := installed[r.Name]; ok && !e.Time.Before(c.Time) {
				at := e.Time
				s.State, s.InstalledAt = backend.StateInstalled, &at
				s.BootMode, s.SecureBoot = e.BootMode, e.SecureBoot
			}
			if in, ok := reports[r.Name]; ok && s.State == backend.StateInstalled && !in.Reported.Before(c.Time) {
				withReport(&s, in.Report)
			}
		}
		out = append(out, s)
	}
	// Broken files are pending ones that cannot be read: listed after
	// the pending, before the consumed.
	var bad []backend.Node
	for _, b := range broken {
		bad = append(bad, backend.Node{Name: b.Name, State: backend.StateBroken, MACs: []string{}, Pools: []string{}, Problem: b.Error()})
	}
	return slices.Insert(out, len(pending), bad...), nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// installReports returns the last installed event of each node in the
// event store s (none when s is nil).
func installReports(ctx context.Context, s events.Store) (map[string]backend.Event, error) {
	if s == nil {
		return map[string]backend.Event{}, nil
	}
	recs, err := s.Read(ctx, "", 0)
	if err != nil {
		return nil, err
	}
	evs := make([]backend.Event, len(recs))
	for i, r := range recs {
		evs[i] = r.Event
	}
	return installedOf(evs), nil
}

// InstalledIn reports the nodes whose installer called the webhook, from
// the event store s (none when s is nil), with the time of the report.
func InstalledIn(ctx context.Context, s events.Store) (map[string]time.Time, error) {
	reports, err := installReports(ctx, s)
	if err != nil {
		return nil, err
	}
	out := make(map[string]time.Time, len(reports))
	for n, e := range reports {
		out[n] = e.Time
	}
	return out, nil
}

// installedOf returns each node's last installed event of evs: the time
// of the report and what it said of the machine's boot.
func installedOf(evs []backend.Event) map[string]backend.Event {
	out := map[string]backend.Event{}
	for _, e := range evs {
		if e.Kind == events.Installed && e.Node != "" {
			out[e.Node] = e
		}
	}
	return out
}

// withReport adds to s what the installer reported: the report, its
// management address and its host keys' fingerprints.
func withReport(s *backend.Node, r answer.InstallReport) {
	s.Install = &r
	if m := r.Management; m != nil && m.Address.IsValid() {
		s.Address = m.Address.String()
	}
	for _, k := range r.HostKeys {
		if fp, err := answer.HostKeyFingerprint(k); err == nil {
			s.HostKeyFingerprints = append(s.HostKeyFingerprints, fp)
		}
	}
}
