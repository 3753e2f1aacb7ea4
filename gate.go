package plasmanode

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/tofu"
)

// Errors of the confirmation gate; compare with errors.Is.
var (
	// ErrDestructivePlan: a plan deletes or replaces a server, or makes a
	// destructive update without the consent asked for; it is not applied.
	// [Gate]'s refusals are a [*PlanRefusedError], which is it.
	ErrDestructivePlan = errors.New("destructive plan refused")
	// ErrNoPrompter: a plan needs confirmation but there is no one to ask
	// (no [Prompter]) and no prior approval.
	ErrNoPrompter = errors.New("confirmation needed")
)

// Prompter asks a person a question and returns the line they answered,
// without its line ending. A cancelled ctx ends the prompt at once with
// ctx's error, without waiting for the answer.
type Prompter interface {
	// Prompt asks question and returns the answer, or ctx's error once
	// ctx is done.
	Prompt(ctx context.Context, question string) (string, error)
}

// Prompt texts of the gate.
const (
	// PromptYN is the simple question of a clean plan.
	PromptYN = "Apply this plan? [y/N]: "
	// PromptTyped is the question of a plan with destructive updates.
	PromptTyped = `Type "yes" to confirm, anything else to abort: `
)

// GateOptions tell [Gate] what the caller consented to.
type GateOptions struct {
	// Command names the operation in messages ("provision").
	Command string
	// AutoApprove skips the prompts of plans that destroy nothing.
	AutoApprove bool
	// AllowDestructive lets AutoApprove apply destructive updates.
	AllowDestructive bool
	// Prompter asks when AutoApprove does not apply; nil refuses with
	// [ErrNoPrompter].
	Prompter Prompter
	// StatePath is the state file named as a possible cause of a delete.
	StatePath string
	// Deletes are the addresses the caller planned to delete on purpose
	// (the surplus servers of a lowered pool count). Only those may be
	// deleted, and only on a typed "yes", or with AutoApprove and
	// AllowDelete; any other delete is refused outright.
	Deletes []string
	// AllowDelete lets AutoApprove apply the planned Deletes.
	AllowDelete bool
}

// Refusal says why [Gate] refused a plan.
type Refusal string

// The refusals of [Gate].
const (
	// RefusedDestroy: the plan deletes a server that is not one of
	// GateOptions.Deletes, or replaces one. No consent lets it through.
	RefusedDestroy Refusal = "destroy"
	// RefusedDelete: the plan deletes the planned Deletes under
	// AutoApprove without AllowDelete.
	RefusedDelete Refusal = "delete"
	// RefusedDestructiveUpdate: the plan makes destructive updates under
	// AutoApprove without AllowDestructive.
	RefusedDestructiveUpdate Refusal = "destructive update"
)

// PlanRefusedError is [Gate]'s refusal of a plan; errors.Is reports it
// as [ErrDestructivePlan]. Its fields let a front end say in its own
// words what consent was missing.
type PlanRefusedError struct {
	// Command names the operation, as GateOptions.Command.
	Command string
	// Reason says why the plan was refused.
	Reason Refusal
	// Deletes, Replacements and DestructiveUpdates are the refused
	// changes: the deletes and replacements of [RefusedDestroy], the
	// deletes of [RefusedDelete], the updates of
	// [RefusedDestructiveUpdate].
	Deletes, Replacements, DestructiveUpdates []tofu.Change
	// StatePath is where the state is, a possible cause of a delete.
	StatePath string
}

// Error describes the refused changes and what would let them through.
func (e *PlanRefusedError) Error() string {
	var b strings.Builder
	cmd := e.Command
	if cmd == "" {
		cmd = "the gate"
	}
	changes := "\n  " + strings.Join(e.ChangeLines(), "\n  ")
	switch e.Reason {
	case RefusedDelete:
		fmt.Fprintf(&b, "%s refused to delete servers under auto-approval alone:", cmd)
		b.WriteString(changes)
		b.WriteString("\nReview the plan interactively (typed \"yes\"), or allow deletes as well as auto-approval")
	case RefusedDestructiveUpdate:
		fmt.Fprintf(&b, "%s refused to apply destructive updates under auto-approval (they reinstall or wipe servers):", cmd)
		b.WriteString(changes)
		b.WriteString("\nReview the plan interactively, or allow destructive updates")
	default:
		fmt.Fprintf(&b, "%s refused to apply this plan: it would destroy servers:", cmd)
		b.WriteString(changes)
		fmt.Fprintf(&b, "\nLikely causes: a wrong server id or a lowered count, stale state at %s, or a configuration bug."+
			"\nTo remove servers on purpose, use destroy", e.state())
	}
	return b.String() + ": " + ErrDestructivePlan.Error()
}

// Unwrap returns [ErrDestructivePlan].
func (e *PlanRefusedError) Unwrap() error { return ErrDestructivePlan }

func (e *PlanRefusedError) state() string {
	if e.StatePath == "" {
		return "the tofu state"
	}
	return e.StatePath
}

// ChangeLines returns one line per refused change, for a message:
// "<address> (action: delete)", "<address> (action: replace)" or
// "<address> (<destructive attributes>)".
func (e *PlanRefusedError) ChangeLines() []string {
	var out []string
	for _, c := range e.Deletes {
		out = append(out, c.Address+" (action: delete)")
	}
	for _, c := range e.Replacements {
		out = append(out, c.Address+" (action: replace)")
	}
	for _, c := range e.DestructiveUpdates {
		out = append(out, c.Address+" ("+strings.Join(c.DestructiveAttrs, ", ")+")")
	}
	return out
}

// Gate applies the confirmation policy of plasmactl-node's join to a
// classified plan and reports whether to apply it:
//
//   - any replacement, or a delete of an address not in Deletes:
//     refused ([RefusedDestroy]), listing each address and action;
//   - deletes of Deletes (a lowered count) under AutoApprove without
//     AllowDelete: refused ([RefusedDelete]), listing each address;
//     AutoApprove never deletes a server by itself;
//   - deletes of Deletes with AutoApprove and AllowDelete: applied (with
//     destructive updates, AllowDestructive is needed too);
//   - deletes of Deletes otherwise: applied only on a typed "yes";
//   - destructive updates with AutoApprove but not AllowDestructive:
//     refused ([RefusedDestructiveUpdate]), listing each "<address>
//     (<attrs>)";
//   - destructive updates with AutoApprove and AllowDestructive: applied;
//   - destructive updates otherwise: applied only on a typed "yes";
//   - a clean plan: applied with AutoApprove, else on "y" or "yes".
//
// A declined prompt returns false and no error; a prompt error, ctx's
// error included, is returned wrapped. Errors: a [*PlanRefusedError]
// ([ErrDestructivePlan]), [ErrNoPrompter].
func Gate(ctx context.Context, s tofu.Summary, o GateOptions) (bool, error) {
	var unplanned []tofu.Change
	for _, c := range s.Deletes {
		if !slices.Contains(o.Deletes, c.Address) {
			unplanned = append(unplanned, c)
		}
	}
	refuse := func(r Refusal, e PlanRefusedError) (bool, error) {
		e.Command, e.Reason, e.StatePath = o.Command, r, o.StatePath
		return false, &e
	}
	switch {
	case len(unplanned)+len(s.Replacements) > 0:
		return refuse(RefusedDestroy, PlanRefusedError{Deletes: unplanned, Replacements: s.Replacements})
	case len(s.Deletes) > 0 && o.AutoApprove && !o.AllowDelete:
		return refuse(RefusedDelete, PlanRefusedError{Deletes: s.Deletes})
	case len(s.Deletes) > 0 && !o.AutoApprove:
		return ask(ctx, o.Prompter, PromptTyped, "yes")
	case len(s.DestructiveUpdates) > 0 && o.AutoApprove && !o.AllowDestructive:
		return refuse(RefusedDestructiveUpdate, PlanRefusedError{DestructiveUpdates: s.DestructiveUpdates})
	case len(s.DestructiveUpdates) > 0 && !o.AutoApprove:
		return ask(ctx, o.Prompter, PromptTyped, "yes")
	case o.AutoApprove:
		return true, nil
	}
	return ask(ctx, o.Prompter, PromptYN, "y", "yes")
}

// canAsk refuses at once, before tofu runs, an operation that will
// want a confirmation when it has neither a prompter nor prior approval:
// a run that could only end in [ErrNoPrompter] after its plan stops
// before it.
func canAsk(p Prompter, approved bool, op string) error {
	if p != nil || approved {
		return nil
	}
	return fmt.Errorf("%s needs confirmation: %w: no one to ask and no prior approval", op, ErrNoPrompter)
}

// ask puts question to p and reports whether the answer is one of
// accept (without regard to case when there are several).
func ask(ctx context.Context, p Prompter, question string, accept ...string) (bool, error) {
	if p == nil {
		return false, fmt.Errorf("plan needs confirmation: %w: no one to ask and no prior approval", ErrNoPrompter)
	}
	ans, err := p.Prompt(ctx, question)
	if err != nil {
		return false, fmt.Errorf("confirm plan: %w", err)
	}
	ans = strings.TrimSpace(ans)
	for _, a := range accept {
		if ans == a || (len(accept) > 1 && strings.EqualFold(ans, a)) {
			return true, nil
		}
	}
	return false, nil
}
