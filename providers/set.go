package providers

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/internal/usage"
)

// ErrUnknown: no provider of a [Set] has the name asked for. Every
// [*UnknownError] is it.
var ErrUnknown = usage.New("unknown provider")

// UnknownError is the error of [Set.Get] for a name the set does not
// hold. It names the known providers, and errors.Is reports it as
// [ErrUnknown].
type UnknownError struct {
	// Name is the name asked for.
	Name string
	// Known are the names the set holds, sorted.
	Known []string
}

// Error says which name is unknown and which are known.
func (e *UnknownError) Error() string {
	known := "none"
	if len(e.Known) > 0 {
		known = strings.Join(e.Known, ", ")
	}
	return fmt.Sprintf("provider %q: %v (known: %s)", e.Name, ErrUnknown, known)
}

// Is reports whether target is [ErrUnknown].
func (e *UnknownError) Is(target error) bool { return target == ErrUnknown }

// UsageError reports true: an unknown provider is bad input, as
// [ErrUnknown] is.
func (e *UnknownError) UsageError() bool { return true }

// Set is the providers a project may name, each under its [Provider.Name].
// It does not change once made, so one Set may serve many projects and
// goroutines. The zero value holds no provider.
type Set struct {
	byName map[string]Provider
}

// NewSet returns the set of ps. A nil provider, an empty name or a name
// given twice is an error wrapping [ErrInvalidInput].
func NewSet(ps ...Provider) (*Set, error) {
	s := &Set{byName: make(map[string]Provider, len(ps))}
	for i, p := range ps {
		if p == nil {
			return nil, fmt.Errorf("provider set: provider %d: %w: nil", i, ErrInvalidInput)
		}
		name := p.Name()
		if name == "" {
			return nil, fmt.Errorf("provider set: provider %d (%T): %w: empty name", i, p, ErrInvalidInput)
		}
		if _, dup := s.byName[name]; dup {
			return nil, fmt.Errorf("provider set: provider %q: %w: given twice", name, ErrInvalidInput)
		}
		s.byName[name] = p
	}
	return s, nil
}

// Get returns the provider named name.
//
// Errors: an [*UnknownError] (errors.Is [ErrUnknown]) naming the known
// providers.
func (s *Set) Get(name string) (Provider, error) {
	if s != nil {
		if p, ok := s.byName[name]; ok {
			return p, nil
		}
	}
	return nil, &UnknownError{Name: name, Known: s.Names()}
}

// Names returns the names of the set's providers, sorted.
func (s *Set) Names() []string {
	if s == nil || len(s.byName) == 0 {
		return []string{}
	}
	return slices.Sorted(maps.Keys(s.byName))
}

// Providers returns the set's providers, sorted by name, for a program
// that makes a new set from this one and its own providers.
func (s *Set) Providers() []Provider {
	names := s.Names()
	out := make([]Provider, 0, len(names))
	for _, n := range names {
		out = append(out, s.byName[n])
	}
	return out
}
