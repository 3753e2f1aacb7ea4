package nodecmd

import (
	"errors"
	"fmt"
	"strings"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
)

// command is what the hints need to know of the command that failed.
type command struct {
	// platform is the platform it ran on; empty when it has none.
	platform string
	// approve is the flag that confirms without a prompt
	// ("--auto-approve", "--force"); empty for a command that asks
	// nothing.
	approve string
}

// flagOf returns the command-line flag of an options field, as
// [plasmanode.OptionError] names it.
func flagOf(field string) string {
	switch field {
	case "PublicIP":
		return "--public-ip"
	case "PrivateIP":
		return "--private-ip"
	case "Hostname":
		return "--hostname"
	case "ServerID":
		return "--server-id"
	case "Provider":
		return "--provider"
	case "Domain":
		return "--domain"
	case "PrivateNetwork":
		return "--private-network"
	}
	return field
}

// hinted is an error whose message a front end rewrote in its own words;
// errors.Is and errors.As see the error it was made from.
type hinted struct {
	msg string
	err error
}

// Error returns the message in the command line's words.
func (h *hinted) Error() string { return h.msg }

// Unwrap returns the error the message was made from.
func (h *hinted) Unwrap() error { return h.err }

// withHints returns err in the command line's words: the options and
// consents the library names in its own words ([plasmanode.OptionError],
// [plasmanode.OptionNeededError], [plasmanode.PlanRefusedError]) become
// flags, and what the person can do next is added for the errors that
// call for it. Errors it has no words for are returned as they are.
func withHints(err error, c command) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	walk(err, func(e error) {
		var words string
		switch e := e.(type) {
		case *plasmanode.OptionError:
			words = e.Describe(flagOf(e.Field))
		case *plasmanode.OptionNeededError:
			words = e.Err.Error() + "; pass " + flagOf(e.Field)
		case *plasmanode.PlanRefusedError:
			words = planRefusal(e)
		default:
			return
		}
		msg = strings.Replace(msg, e.Error(), words, 1)
	})
	switch {
	case errors.Is(err, plasmanode.ErrNoPrompter) && c.approve != "":
		msg += "; pass " + c.approve + " or run on a terminal"
	case errors.Is(err, providers.ErrNoInfrastructure) && c.platform != "":
		msg += "; register machines with plasma-node add " + c.platform + " --hostname H"
	case errors.Is(err, providers.ErrDirect):
		msg += "; raise a pool's count with plasma-node provision and give the machines with --hardware"
	case errors.Is(err, nodes.ErrNoPlatformsDir):
		msg += "; create a platform with plasma-node add NAME, or name the project folder with --dir"
	case errors.Is(err, plasmanode.ErrNoPools) && c.platform != "":
		msg += " (run: plasma-node provision " + c.platform + " -z zone:type:count)"
	}
	if msg == err.Error() {
		return err
	}
	return &hinted{msg: msg, err: err}
}

// walk calls f on err and on every error err wraps, depth first.
func walk(err error, f func(error)) {
	if err == nil {
		return
	}
	f(err)
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		walk(u.Unwrap(), f)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			walk(e, f)
		}
	}
}

// planRefusal says why the gate refused a plan, naming the flags that
// consent.
func planRefusal(e *plasmanode.PlanRefusedError) string {
	cmd := strings.TrimSpace("plasma-node " + e.Command)
	changes := "\n  " + strings.Join(e.ChangeLines(), "\n  ")
	var msg string
	switch e.Reason {
	case plasmanode.RefusedDelete:
		msg = cmd + " refused to delete servers under --auto-approve alone:" + changes +
			"\nReview the plan interactively (typed \"yes\"), or add --allow-delete beside --auto-approve"
	case plasmanode.RefusedDestructiveUpdate:
		msg = cmd + " refused to apply destructive updates under --auto-approve (they reinstall or wipe servers):" + changes +
			"\nReview the plan interactively, or add --allow-destructive-update"
	default:
		state := e.StatePath
		if state == "" {
			state = "the tofu state"
		}
		msg = cmd + " refused to apply this plan: it would destroy servers:" + changes +
			"\nLikely causes: a wrong --server-id or a lowered count, stale state at " + state + ", or a configuration bug." +
			"\nTo remove servers on purpose, use plasma-node destroy"
	}
	return fmt.Sprintf("%s: %v", msg, plasmanode.ErrDestructivePlan)
}
