package enrol

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Errors of the rule set's operations.
var (
	// ErrNotFound: no rule of the name.
	ErrNotFound = errors.New("no enrolment rule")
	// ErrExists: a rule of the name exists (add without replace).
	ErrExists = errors.New("an enrolment rule of that name exists")
	// ErrPriorityTaken: another rule has the priority.
	ErrPriorityTaken = errors.New("another enrolment rule has that priority")
)

// State is what a [Store] keeps: the rules, sorted by priority, each
// rule's counter, and the names and addresses held by enrolments under
// way.
type State struct {
	// Rules are the rules, by priority.
	Rules []Rule `json:"rules"`
	// Counters are the rules' counters, by rule name.
	Counters map[string]Counter `json:"counters,omitempty"`
	// Held are the names and addresses of enrolments under way: taken
	// before the registration is written, so that enrolments racing on
	// any host never give one name or address twice.
	Held []Hold `json:"held,omitempty"`
}

// Counter is a rule's count.
type Counter struct {
	// Next is the number {n} tries next; 0 means 1.
	Next int `json:"next,omitempty"`
	// Enrolled is how many machines the rule enrolled.
	Enrolled int `json:"enrolled,omitempty"`
}

// Hold is a name (and address) an enrolment under way holds.
type Hold struct {
	Rule    string    `json:"rule"`
	Name    string    `json:"name"`
	Address string    `json:"address,omitempty"`
	Machine string    `json:"machine"`
	Time    time.Time `json:"time"`
}

// HoldTTL is how long a hold is kept: an enrolment whose host died
// between taking it and writing the registration gives it up then.
const HoldTTL = 10 * time.Minute

// Store keeps the rule [State] for every host of a site. Package
// pxe/store/folder keeps it in the state folder, pxe/store/postgres in
// PostgreSQL; package enrol/enroltest is the suite every store passes.
// Methods are safe for concurrent use, also from several processes and
// hosts.
type Store interface {
	// Read returns the state; an empty one when nothing was kept.
	Read(ctx context.Context) (State, error)
	// Update applies fn to the state and keeps its result, atomically:
	// of updates racing on any host, each fn sees the result of those
	// before it. An error of fn keeps nothing and is returned as it is.
	// It returns the state kept.
	Update(ctx context.Context, fn func(State) (State, error)) (State, error)
}

// Rule returns the rule of name in s.
func (s State) Rule(name string) (Rule, error) {
	i := slices.IndexFunc(s.Rules, func(r Rule) bool { return r.Name == name })
	if i < 0 {
		return Rule{}, fmt.Errorf("%w named %q", ErrNotFound, name)
	}
	return s.Rules[i], nil
}

// Add returns s with r added, or replacing the rule of its name when
// replace is set (its counter kept). It refuses a name that exists
// without replace ([ErrExists]) and what [CheckSet] refuses. r must
// have passed [Rule.Check].
func (s State) Add(r Rule, replace bool) (State, error) {
	rules := slices.Clone(s.Rules)
	if i := slices.IndexFunc(rules, func(o Rule) bool { return o.Name == r.Name }); i >= 0 {
		if !replace {
			return s, fmt.Errorf("rule %s: %w; replace it, or remove it first", r.Name, ErrExists)
		}
		rules[i] = r
	} else {
		rules = append(rules, r)
	}
	return s.with(rules)
}

// Remove returns s without the rule name and its counter.
func (s State) Remove(name string) (State, error) {
	if _, err := s.Rule(name); err != nil {
		return s, err
	}
	return s.with(slices.DeleteFunc(slices.Clone(s.Rules), func(r Rule) bool { return r.Name == name }))
}

// Apply returns s with rules as its whole set: the counters of the rules
// kept stay, the others go. Each rule must have passed [Rule.Check].
func (s State) Apply(rules []Rule) (State, error) {
	return s.with(slices.Clone(rules))
}

// with returns s with rules, sorted and checked, and the counters of
// the rules left.
func (s State) with(rules []Rule) (State, error) {
	if err := CheckSet(rules); err != nil {
		return s, err
	}
	slices.SortFunc(rules, func(a, b Rule) int { return cmp.Compare(a.Priority, b.Priority) })
	out := State{Rules: rules, Held: slices.Clone(s.Held)}
	for _, r := range rules {
		if c, ok := s.Counters[r.Name]; ok {
			if out.Counters == nil {
				out.Counters = map[string]Counter{}
			}
			out.Counters[r.Name] = c
		}
	}
	return out, nil
}

// CheckSet refuses rules that cannot stand together: more than
// [MaxRules], two of one name, two of one priority
// ([ErrPriorityTaken]), two of one name template (they would give one
// name), and two naming one address pool defined differently.
func CheckSet(rules []Rule) error {
	if len(rules) > MaxRules {
		return fmt.Errorf("%w: %d rules, more than %d", ErrInvalidRule, len(rules), MaxRules)
	}
	for i, r := range rules {
		for _, o := range rules[:i] {
			switch {
			case o.Name == r.Name:
				return fmt.Errorf("%w: two rules named %s", ErrInvalidRule, r.Name)
			case o.Priority == r.Priority:
				return fmt.Errorf("rule %s: %w (%d, rule %s): give each rule its own priority", r.Name, ErrPriorityTaken, r.Priority, o.Name)
			case o.Hostname == r.Hostname:
				return fmt.Errorf("%w: rules %s and %s have one name template %q and would give one name twice", ErrInvalidRule, o.Name, r.Name, r.Hostname)
			case r.Address != nil && o.Address != nil && r.Address.Pool == o.Address.Pool && !sameAddress(*r.Address, *o.Address):
				return fmt.Errorf("%w: rules %s and %s define address pool %s differently", ErrInvalidRule, o.Name, r.Name, r.Address.Pool)
			}
		}
	}
	return nil
}

func sameAddress(a, b Address) bool {
	return a.CIDR == b.CIDR && a.Range == b.Range && a.Gateway == b.Gateway && a.DNS == b.DNS && slices.Equal(a.Exclude, b.Exclude)
}
