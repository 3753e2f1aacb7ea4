package registry

import (
	"context"
	"fmt"
	"slices"

	"github.com/plasmactl/plasma-node/answer"
)

// MaxRegistrationSize bounds a registration's encoding: 1 MiB. [Prepare]
// refuses a larger one, which a store could not read back.
const MaxRegistrationSize = 1 << 20

// Broken is a registration file that cannot be read: malformed JSON, an
// invalid field, a name that does not match its file, or not a regular
// file. While one is pending it blocks the only-pending match (rule 2 of
// [Match]): it may pin the machine that asks.
type Broken struct {
	// Name is the file's stem, the registration's name as far as known.
	Name string `json:"name"`
	// File is the file's path.
	File string `json:"file"`
	// Line is the line of the first error, when one is known; else 0.
	Line int `json:"line,omitempty"`
	// Err is why it cannot be read.
	Err error `json:"-"`
}

// Error says where and why, as "registrations/a.json line 3: …".
func (b Broken) Error() string {
	where := b.File
	if b.Line > 0 {
		where += fmt.Sprintf(" line %d", b.Line)
	}
	return where + ": " + b.Err.Error()
}

// Registrations is the store of registrations: the window's allowlist
// and its one-shot state. Package pxe/store/folder is the state folder's
// implementation; another (a database, an embedder's own) implements the
// same semantics, which the conformance suite in package
// registry/storetest checks:
//
//   - Register writes a registration, refusing a pin another pending one
//     holds ([ErrPinTaken]) unless RegisterOptions.Replace moves it;
//   - Consume succeeds once per registration among any number of
//     concurrent callers; the others get [ErrAlreadyConsumed] (or
//     [ErrNotFound]);
//   - a consumed registration is Undelivered until MarkDelivered, and only
//     an undelivered one is re-armed without force ([ErrDelivered]);
//   - a registration larger than [MaxRegistrationSize] encoded is refused.
//
// Methods are safe for concurrent use.
type Registrations interface {
	// Scan returns the pending registrations sorted by name, and those
	// that cannot be read (which block matching by elimination).
	Scan(ctx context.Context) ([]Registration, []Broken, error)
	// Consumed returns the consumed registrations sorted by name, each
	// with Consumed set.
	Consumed(ctx context.Context) ([]Registration, error)
	// Get returns the pending registration name, or an error wrapping
	// [ErrNotFound].
	Get(ctx context.Context, name string) (Registration, error)
	// Register writes r, [Prepare]d, as the pending registration of its
	// name, replacing one of the same name (RegisterResult.Previous); a
	// pin another pending registration holds is refused ([TakePins]).
	Register(ctx context.Context, r Registration, opts RegisterOptions) (RegisterResult, error)
	// Delete removes the pending registration name ([ErrNotFound] when
	// there is none); a consumed record stays.
	Delete(ctx context.Context, name string) error
	// Consume marks the pending registration name served, once, with rec.
	Consume(ctx context.Context, name string, rec ConsumeRecord) (Registration, error)
	// MarkDelivered clears the consumed registration's Undelivered.
	MarkDelivered(ctx context.Context, name string) error
	// Rearm puts a consumed, undelivered registration back to pending
	// (any consumed one with o.Force), its WipeData set to o.WipeData.
	Rearm(ctx context.Context, name string, o RearmOptions) error
}

// RearmOptions say how [Registrations.Rearm] re-arms a registration.
type RearmOptions struct {
	// Force re-arms one whose answer was seen delivered (a reinstall);
	// without it that is refused with [ErrDelivered].
	Force bool
	// WipeData is the pending registration's [Registration.WipeData]:
	// false clears what the consumed one had, so that only the re-arm
	// that asks for it wipes data.
	WipeData bool
}

// Pending returns the pending registrations of s sorted by name, without
// those that cannot be read.
func Pending(ctx context.Context, s Registrations) ([]Registration, error) {
	rs, _, err := s.Scan(ctx)
	return rs, err
}

// AsksForBootDisk reports whether a pending registration of s leaves its
// boot disk to the installer's console ("ask"): boot assets must then be
// prepared with the console prompt patched in.
func AsksForBootDisk(ctx context.Context, s Registrations) (bool, error) {
	pending, err := Pending(ctx, s)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(pending, func(r Registration) bool { return r.BootDisk.Kind == answer.BootDiskAsk }), nil
}

// Installs is the store of install reports, one per registration name.
// Package pxe/store/folder is the state folder's implementation;
// another implements the same semantics, which the conformance suite in
// package registry/installtest checks:
//
//   - Put keeps in, replacing the report of the same name (a reinstall);
//   - Get returns what the last Put of that name kept, or an error
//     wrapping [ErrNoInstall];
//   - List returns every kept report, sorted by name;
//   - a name [ValidateName] refuses is refused by Put.
//
// Methods are safe for concurrent use.
type Installs interface {
	// Put keeps in, replacing the report of its name.
	Put(ctx context.Context, in Install) error
	// Get returns the report of name.
	Get(ctx context.Context, name string) (Install, error)
	// List returns the reports sorted by name.
	List(ctx context.Context) ([]Install, error)
}

// notFoundError is an [ErrNotFound] in its own words.
type notFoundError struct{ msg string }

func (e *notFoundError) Error() string { return e.msg }
func (e *notFoundError) Unwrap() error { return ErrNotFound }

// NotConsumed is the error of an operation (op: "re-arm", "reinstall")
// on a consumed registration name that none is: pending says a pending
// registration has the name, which is then still armed. It wraps
// [ErrNotFound].
func NotConsumed(name string, pending bool, op string) error {
	if pending {
		return &notFoundError{fmt.Sprintf("registration %s is still pending: its machine gets its answer when it boots; nothing to %s", name, op)}
	}
	return &notFoundError{fmt.Sprintf("no registration named %q", name)}
}
