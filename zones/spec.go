package zones

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Spec is one zone:type:count provisioning spec, as given with
// `provision -z foundation.cluster.control:GP1-L:3`: Count machines of the
// provider instance type Type for Zone.
type Spec struct {
	// Zone is the normalised zone path (see [Normalize]).
	Zone string
	// Type is the provider's instance or machine type, e.g. GP1-L.
	Type string
	// Count is the number of machines, at least 1.
	Count int
}

// ParseSpec parses a zone:type:count spec. The zone is everything before
// the first ':' and the count everything after the last ':'; the type is
// what lies between, and may therefore not contain ':' itself (no known
// provider's instance type does). Each part is trimmed of surrounding
// space. The zone is normalised with [Normalize], the type must be
// non-empty and without spaces, and the count must be a positive decimal
// integer.
//
// Errors wrap [ErrInvalidSpec] and say which part is wrong; a bad zone also
// wraps [ErrInvalidZone].
func ParseSpec(s string) (Spec, error) {
	t := strings.TrimSpace(s)
	first, last := strings.IndexByte(t, ':'), strings.LastIndexByte(t, ':')
	if first < 0 || first == last {
		return Spec{}, newError(ErrInvalidSpec, nil, fmt.Sprintf("zone spec %q: want zone:type:count, e.g. foundation.cluster.control:GP1-L:3", s))
	}
	zonePart := t[:first]
	typ := strings.TrimSpace(t[first+1 : last])
	countPart := strings.TrimSpace(t[last+1:])

	zone, err := Normalize(zonePart)
	if err != nil {
		return Spec{}, newError(ErrInvalidSpec, err, fmt.Sprintf("zone spec %q", s))
	}
	switch {
	case typ == "":
		return Spec{}, newError(ErrInvalidSpec, nil, fmt.Sprintf("zone spec %q: type is empty; want zone:type:count", s))
	case strings.Contains(typ, ":"):
		return Spec{}, newError(ErrInvalidSpec, nil, fmt.Sprintf("zone spec %q: type %q must not contain ':'; want zone:type:count", s, typ))
	case strings.IndexFunc(typ, unicode.IsSpace) >= 0:
		return Spec{}, newError(ErrInvalidSpec, nil, fmt.Sprintf("zone spec %q: type %q must not contain spaces", s, typ))
	}
	count, ok := positiveInt(countPart)
	if ok && count > maxCount {
		return Spec{}, newError(ErrInvalidSpec, nil, fmt.Sprintf("zone spec %q: count %d is over %d, the most one pool numbers (<platform>-<pool>-NNN)", s, count, maxCount))
	}
	if !ok {
		return Spec{}, newError(ErrInvalidSpec, nil, fmt.Sprintf("zone spec %q: count %q must be a positive integer", s, countPart))
	}
	return Spec{Zone: zone, Type: typ, Count: count}, nil
}

// maxCount is the most machines one spec (one pool) asks for: 999, the
// three-digit number of the pool's host names.
const maxCount = 999

// String returns the spec in zone:type:count form; ParseSpec reads it back
// to the same Spec.
func (s Spec) String() string {
	return s.Zone + ":" + s.Type + ":" + strconv.Itoa(s.Count)
}

// positiveInt parses s as decimal digits only (no sign) and reports whether
// it is a positive int.
func positiveInt(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}
