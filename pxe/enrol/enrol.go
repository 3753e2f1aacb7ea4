package enrol

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// Registrations is what an [Enroller] reads and writes of the
// registrations: a [registry.Registrations] has it.
type Registrations interface {
	// Scan returns the pending registrations and those that cannot be
	// read.
	Scan(ctx context.Context) ([]registry.Registration, []registry.Broken, error)
	// Consumed returns the consumed registrations.
	Consumed(ctx context.Context) ([]registry.Registration, error)
}

// RegisterFunc writes a registration an enrolment made: package
// pxe/registrar's Register over the site's stores. Its BMC, if any,
// names the rule's site secret (read when the BMC is used), so it comes
// with no password of its own. It must refuse a pin another
// registration holds.
type RegisterFunc func(ctx context.Context, r registry.Registration) error

// Secrets reads the site's named secrets (a BMC password a rule names).
type Secrets interface {
	// ReadSiteSecret returns the secret of name, an error wrapping
	// fs.ErrNotExist when there is none.
	ReadSiteSecret(ctx context.Context, name string) (string, error)
}

// Enroller makes registrations from discovery reports by the rules.
// Its zero value is not usable: Rules, Registrations and Register are
// required.
type Enroller struct {
	// Rules is the rule store.
	Rules Store
	// Registrations are read for the names, addresses and pins taken.
	Registrations Registrations
	// Register writes the registration.
	Register RegisterFunc
	// Secrets are the site secrets a rule's BMC names: an enrolment
	// checks that the secret is set; nil fails every rule with a BMC
	// closed.
	Secrets Secrets
	// Site is the site's settings.
	Site registry.Site
	// Events receives "enrolled by rule R" and the refusals; nil
	// records none.
	Events events.Store
	// Logger receives the enrolments' logs; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Enrol enrols the machine of rec, which the inbox just kept: it
// decides ([Decide]) under the rule store's lock, holding the name and
// address ([HoldTTL]), and writes the registration. It fails
// closed, writing no registration, with the decision's error (see
// [Decision].Err), also when the registration cannot be written (the
// rule's count is then taken back). A machine no rule matches is
// [ErrNoRule], which a caller usually only shows. The decision is
// returned in every case.
func (e *Enroller) Enrol(ctx context.Context, rec discovery.Record) (Decision, error) {
	log := e.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	pending, broken, err := e.Registrations.Scan(ctx)
	if err != nil {
		return Decision{Machine: rec.ID}, fmt.Errorf("enrol %s: %w", rec.ID, err)
	}
	if len(broken) > 0 {
		d := Decision{Machine: rec.ID, Err: fmt.Errorf("%w: registration %s cannot be read and may pin this machine", ErrRegistered, broken[0].Name)}
		d.Reason = d.Err.Error()
		return d, e.done(ctx, log, rec, d)
	}
	consumed, err := e.Registrations.Consumed(ctx)
	if err != nil {
		return Decision{Machine: rec.ID}, fmt.Errorf("enrol %s: %w", rec.ID, err)
	}
	in := Inputs{Registrations: append(pending, consumed...), Site: e.Site, Now: now()}
	var d Decision
	_, err = e.Rules.Update(ctx, func(s State) (State, error) {
		var out State
		d, out = Decide(s, rec, in)
		return out, d.Err
	})
	if err != nil && d.Err == nil {
		return d, fmt.Errorf("enrol %s: %w", rec.ID, err)
	}
	if d.Err != nil {
		return d, e.done(ctx, log, rec, d)
	}
	if d.BMCSecret != "" {
		// The registration names the secret, read at each use of the
		// BMC; one not set fails the enrolment closed.
		if e.Secrets == nil {
			err = errors.New("no site secrets to read the BMC password from")
		} else {
			_, err = e.Secrets.ReadSiteSecret(ctx, d.BMCSecret)
		}
		if err != nil {
			err = fmt.Errorf("rule %s: BMC password from site secret %s: %w", d.Rule, d.BMCSecret, err)
		}
	}
	if err == nil {
		err = e.Register(ctx, *d.Registration)
	}
	if err != nil {
		if _, rerr := e.Rules.Update(context.WithoutCancel(ctx), func(s State) (State, error) { return s.Release(d.Name), nil }); rerr != nil {
			log.Warn("enrolment hold not released; it expires", "name", d.Name, "err", rerr)
		}
		d.Err, d.Reason, d.Registration = err, err.Error(), nil
	}
	return d, e.done(ctx, log, rec, d)
}

// done records the decision's event, log and count, and returns its
// error.
func (e *Enroller) done(ctx context.Context, log *slog.Logger, rec discovery.Record, d Decision) error {
	ev := events.Event{Kind: events.Enrolled, Node: d.Name, MAC: rec.ID}
	switch {
	case d.Err == nil:
		ev.Detail = EnrolledDetail(d.Rule, d.Mode)
		log.Info("enrolled", "machine", rec.ID, "rule", d.Rule, "node", d.Name, "mode", d.Mode)
	case errors.Is(d.Err, ErrNoRule):
		ev.Kind, ev.Detail = events.Unenrolled, d.Reason
		log.Info("no enrolment rule matches", "machine", rec.ID, "reason", d.Reason)
	default:
		ev.Kind, ev.Detail = events.Unenrolled, "enrolment refused: "+d.Reason
		log.Warn("enrolment refused", "machine", rec.ID, "rule", d.Rule, "reason", d.Reason)
	}
	if e.Events != nil {
		if err := e.Events.Append(context.WithoutCancel(ctx), ev); err != nil {
			log.Warn("enrolment event not recorded", "err", err)
		}
	}
	if d.Err != nil {
		return fmt.Errorf("enrol %s: %w", rec.ID, d.Err)
	}
	return nil
}

// EnrolledDetail is the timeline's words for an enrolment by rule.
func EnrolledDetail(rule string, mode Mode) string {
	return fmt.Sprintf("enrolled by rule %s (%s)", rule, mode)
}
