package plasmanode

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/tofu"
)

// Errors of the confirmation gate; compare with errors.Is.
var (
	// ErrDestructivePlan: a plan deletes or replaces a server, or makes a
	// destructive update without the consent asked for; it is not applied.
	ErrDestructivePlan = errors.New("destructive plan refused")
	// ErrNoPrompter: a plan needs confirmation but there is no one to ask.
	ErrNoPrompter = errors.New("confirmation needed")
)

// Prompter asks a person a question and returns the line they answered,
// without its line ending.
type Prompter interface {
	Prompt(question string) (string, error)
}

// LinePrompter is a [Prompter] that writes questions to Out and reads one
// line of answer from In (a terminal).
type LinePrompter struct {
	In  *bufio.Reader
	Out io.Writer
}

// NewLinePrompter returns a [LinePrompter] reading in and writing out.
func NewLinePrompter(in io.Reader, out io.Writer) *LinePrompter {
	return &LinePrompter{In: bufio.NewReader(in), Out: out}
}

// Prompt writes question and reads one line; an end of input with no
// answer is an empty answer.
func (l *LinePrompter) Prompt(question string) (string, error) {
	fmt.Fprint(l.Out, question)
	line, err := l.In.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read answer: %w", err)
	}
	return strings.TrimSpace(line), nil
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
	// Command names the command in messages ("plasma-node join").
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

// Gate applies the confirmation policy of plasmactl-node's join to a
// classified plan and reports whether to apply it:
//
//   - any replacement, or a delete of an address not in Deletes:
//     refused, an error wrapping [ErrDestructivePlan] listing each
//     address and action and pointing to plasma-node destroy;
//   - deletes of Deletes (a lowered count) under AutoApprove without
//     AllowDelete: refused, naming --allow-delete and each address;
//     AutoApprove never deletes a server by itself;
//   - deletes of Deletes with AutoApprove and AllowDelete: applied (with
//     destructive updates, AllowDestructive is needed too);
//   - deletes of Deletes otherwise: applied only on a typed "yes";
//   - destructive updates with AutoApprove but not AllowDestructive:
//     refused, naming --allow-destructive-update and each "<address>
//     (<attrs>)";
//   - destructive updates with AutoApprove and AllowDestructive: applied;
//   - destructive updates otherwise: applied only on a typed "yes";
//   - a clean plan: applied with AutoApprove, else on "y" or "yes".
//
// A declined prompt returns false and no error; a prompt error is
// returned wrapped. Errors: [ErrDestructivePlan], [ErrNoPrompter].
func Gate(s tofu.Summary, o GateOptions) (bool, error) {
	cmd := o.Command
	if cmd == "" {
		cmd = "plasma-node"
	}
	var unplanned []tofu.Change
	for _, c := range s.Deletes {
		if !slices.Contains(o.Deletes, c.Address) {
			unplanned = append(unplanned, c)
		}
	}
	if len(unplanned)+len(s.Replacements) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "%s refused to apply this plan: it would destroy servers:", cmd)
		for _, c := range unplanned {
			fmt.Fprintf(&b, "\n  %s (action: delete)", c.Address)
		}
		for _, c := range s.Replacements {
			fmt.Fprintf(&b, "\n  %s (action: replace)", c.Address)
		}
		state := o.StatePath
		if state == "" {
			state = "the tofu state"
		}
		fmt.Fprintf(&b, "\nLikely causes: a wrong --server-id or a lowered count, stale state at %s, or a configuration bug."+
			"\nTo remove servers on purpose, use plasma-node destroy", state)
		return false, fmt.Errorf("%s: %w", b.String(), ErrDestructivePlan)
	}
	if len(s.Deletes) > 0 {
		if o.AutoApprove && !o.AllowDelete {
			var b strings.Builder
			fmt.Fprintf(&b, "%s refused to delete servers under --auto-approve alone:", cmd)
			for _, c := range s.Deletes {
				fmt.Fprintf(&b, "\n  %s (action: delete)", c.Address)
			}
			b.WriteString("\nReview the plan interactively (typed \"yes\"), or add --allow-delete beside --auto-approve")
			return false, fmt.Errorf("%s: %w", b.String(), ErrDestructivePlan)
		}
		if !o.AutoApprove {
			return ask(o, PromptTyped, "yes")
		}
	}
	if len(s.DestructiveUpdates) > 0 {
		if o.AutoApprove && o.AllowDestructive {
			return true, nil
		}
		if o.AutoApprove {
			var b strings.Builder
			fmt.Fprintf(&b, "%s refused to apply destructive updates under --auto-approve (they reinstall or wipe servers):", cmd)
			for _, c := range s.DestructiveUpdates {
				fmt.Fprintf(&b, "\n  %s (%s)", c.Address, strings.Join(c.DestructiveAttrs, ", "))
			}
			b.WriteString("\nReview the plan interactively, or add --allow-destructive-update")
			return false, fmt.Errorf("%s: %w", b.String(), ErrDestructivePlan)
		}
		return ask(o, PromptTyped, "yes")
	}
	if o.AutoApprove {
		return true, nil
	}
	return ask(o, PromptYN, "y", "yes")
}

func ask(o GateOptions, question string, accept ...string) (bool, error) {
	if o.Prompter == nil {
		return false, fmt.Errorf("plan needs confirmation: %w: pass --auto-approve or run on a terminal", ErrNoPrompter)
	}
	ans, err := o.Prompter.Prompt(question)
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
