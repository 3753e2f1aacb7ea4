package plasmanode

import (
	"fmt"

	"github.com/plasmactl/plasma-node/internal/usage"
)

// OptionError is bad input in one field of an operation's options. Field
// names the field as its options struct does ("PrivateIP"), so that a
// front end can name its own flag for it; Err says what is wrong and
// wraps the sentinel callers test ([ErrInvalidAddress], [ErrConflict],
// ipam.ErrInUse, providers.ErrInvalidServerID, ...). It is always bad
// usage ([IsUsageError]).
type OptionError struct {
	// Field is the options field at fault: "PublicIP", "PrivateIP" and
	// "Hostname" of [RegisterOptions] or [JoinOptions], "ServerID" of
	// [JoinOptions], "Provider", "Domain" and "PrivateNetwork" of
	// [ScaffoldOptions].
	Field string
	// Value is the value given, quoted in the message; empty when Err
	// names it itself.
	Value string
	// Err says what is wrong with the value.
	Err error
}

// Error names the field in words ("private IP"), then what is wrong.
func (e *OptionError) Error() string { return e.Describe(fieldWords(e.Field)) }

// Unwrap returns Err.
func (e *OptionError) Unwrap() error { return e.Err }

// UsageError reports true: the field is bad input ([IsUsageError]).
func (e *OptionError) UsageError() bool { return true }

// Describe returns the message of the error with name in place of the
// field's words: a front end passes the name the person knows the field
// by ("--private-ip").
func (e *OptionError) Describe(name string) string {
	if e.Value != "" {
		return fmt.Sprintf("%s %q: %v", name, e.Value, e.Err)
	}
	return name + ": " + e.Err.Error()
}

// OptionNeededError is an operation's refusal to guess a field of its
// options that was left empty: the value it would have made (a hostname
// from a server's name or id) is not usable, so the field must be given.
// Field names it as [OptionError]'s does; Err says why the value made
// is not usable. It is always bad usage ([IsUsageError]).
type OptionNeededError struct {
	// Field is the options field to give ("Hostname").
	Field string
	// Err says why no usable value could be made.
	Err error
}

// Error says why no value could be made and which one to give.
func (e *OptionNeededError) Error() string {
	return e.Err.Error() + "; give the " + fieldWords(e.Field)
}

// Unwrap returns Err.
func (e *OptionNeededError) Unwrap() error { return e.Err }

// UsageError reports true: a field must be given ([IsUsageError]).
func (e *OptionNeededError) UsageError() bool { return true }

// fieldWords names an options field in a message.
func fieldWords(field string) string {
	switch field {
	case "PublicIP":
		return "public IP"
	case "PrivateIP":
		return "private IP"
	case "ServerID":
		return "server id"
	case "PrivateNetwork":
		return "private network"
	case "Hostname":
		return "hostname"
	case "Provider":
		return "provider"
	case "Domain":
		return "domain"
	}
	return field
}

var (
	_ usage.Marker = (*OptionError)(nil)
	_ usage.Marker = (*OptionNeededError)(nil)
)
