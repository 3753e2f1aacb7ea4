package discovery

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/answer"
)

// ErrNotFound is the error of a MAC, serial or ID no live entry holds.
var ErrNotFound = errors.New("no discovered machine")

// ErrFull is the error of a report of a new machine while the inbox
// holds its bound of live entries.
var ErrFull = errors.New("the discovery inbox is full")

// ErrAmbiguous is the error of a serial that more than one entry holds.
var ErrAmbiguous = errors.New("more than one discovered machine")

// Defaults of [Limits].
const (
	// DefaultMax is the inbox's bound of entries.
	DefaultMax = 256
	// DefaultTTL is how long an entry not seen again is kept.
	DefaultTTL = 7 * 24 * time.Hour
)

// Limits bound an inbox. Zero fields take the defaults.
type Limits struct {
	// Max is the most live entries kept; [DefaultMax] when zero.
	Max int
	// TTL is how long after its last report an entry expires;
	// [DefaultTTL] when zero.
	TTL time.Duration
}

// WithDefaults returns l with its zero fields set to the defaults.
func (l Limits) WithDefaults() Limits {
	if l.Max <= 0 {
		l.Max = DefaultMax
	}
	if l.TTL <= 0 {
		l.TTL = DefaultTTL
	}
	return l
}

// Store keeps the inbox. Every implementation follows [Put]'s rule, and
// passes the conformance suite of package discovery/discoverytest.
type Store interface {
	// Put records report, decoded by [Decode], as seen at now, by the
	// rule of [Put]; it returns the entry as kept. A new machine while
	// the inbox is full is refused with an error wrapping [ErrFull],
	// and nothing changes.
	Put(ctx context.Context, report Report, now time.Time) (Record, error)
	// List returns the entries live at now, oldest first.
	List(ctx context.Context, now time.Time) ([]Record, error)
	// Remove removes the entry with id; an error wrapping
	// [ErrNotFound] when there is none.
	Remove(ctx context.Context, id string) error
}

// Live returns the entries of recs that have not expired at now under
// l, oldest first (by first seen, then ID).
func Live(recs []Record, now time.Time, l Limits) []Record {
	l = l.WithDefaults()
	out := make([]Record, 0, len(recs))
	for _, r := range recs {
		if now.Sub(r.LastSeen) < l.TTL {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b Record) int {
		if c := a.FirstSeen.Compare(b.FirstSeen); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// Put is the rule every [Store]'s Put follows, over the entries recs
// a store holds: the expired ones are dropped; an entry of the same
// machine ([Same]) takes the report and last seen now, keeping its ID
// and first seen (entries of the same machine beyond the first are
// merged into it); else a new entry is added, unless l.Max live entries
// are held ([ErrFull]). It returns the entries to keep, oldest first,
// and the entry written.
func Put(recs []Record, report Report, now time.Time, l Limits) ([]Record, Record, error) {
	l = l.WithDefaults()
	if len(report.NICs) == 0 {
		return nil, Record{}, fmt.Errorf("discovery: %w: a report without a NIC", ErrInvalid)
	}
	live := Live(recs, now, l)
	out := make([]Record, 0, len(live)+1)
	var kept *Record
	for _, r := range live {
		if !Same(r.Report, report) {
			out = append(out, r)
			continue
		}
		if kept == nil {
			r.Report, r.LastSeen = report, now
			out = append(out, r)
			kept = &out[len(out)-1]
		}
	}
	if kept != nil {
		return out, kept.Clone(), nil
	}
	if len(out) >= l.Max {
		return nil, Record{}, fmt.Errorf("discovery: %w (%d machines); register or remove some, or wait for them to expire", ErrFull, l.Max)
	}
	rec := Record{ID: report.key(), Report: report, FirstSeen: now, LastSeen: now}
	out = append(out, rec)
	return out, rec.Clone(), nil
}

// Find returns the entry of recs that key names: its ID, one of its
// MACs (any case, with colons or dashes), or its DMI serial. A serial
// more than one entry holds is an error wrapping [ErrAmbiguous].
func Find(recs []Record, key string) (Record, error) {
	if mac, ok := answer.CanonicalMAC(key); ok {
		for _, r := range recs {
			if slices.Contains(r.MACs(), mac) {
				return r.Clone(), nil
			}
		}
	}
	var found []Record
	for _, r := range recs {
		if r.ID == key || (r.DMI.Serial == key && UsableSerial(key)) {
			found = append(found, r)
		}
	}
	switch len(found) {
	case 0:
		return Record{}, fmt.Errorf("discovery: %w with MAC or serial %q", ErrNotFound, key)
	case 1:
		return found[0].Clone(), nil
	}
	ids := make([]string, len(found))
	for i, r := range found {
		ids[i] = r.ID
	}
	return Record{}, fmt.Errorf("discovery: %w holds serial %q (%s); name one by its MAC", ErrAmbiguous, key, strings.Join(ids, ", "))
}

// Lookup lists s at now and finds key in it ([Find]).
func Lookup(ctx context.Context, s Store, key string, now time.Time) (Record, error) {
	recs, err := s.List(ctx, now)
	if err != nil {
		return Record{}, err
	}
	return Find(recs, key)
}
