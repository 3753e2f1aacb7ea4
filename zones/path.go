package zones

import (
	"fmt"
	"strings"
)

// Root is the first segment of every normalised zone path.
const Root = "platform"

// segmentRule is the rule every segment must satisfy, as shown in errors.
const segmentRule = "[a-z0-9_-]+"

// Normalize trims surrounding space from s, checks that it is dotted
// segments each matching [a-z0-9_-]+ (no empty segment, lower case only),
// and prefixes it with "platform." unless its first segment already is
// platform. So foundation.cluster.control becomes
// platform.foundation.cluster.control, while platform and platform.x stay
// as they are.
//
// A bad path gives an error wrapping [ErrInvalidZone] that names the
// value, the bad segment and the rule.
func Normalize(s string) (string, error) {
	z := strings.TrimSpace(s)
	if z == "" {
		return "", newError(ErrInvalidZone, nil, fmt.Sprintf("zone %q is empty; want dotted segments matching %s, e.g. platform.foundation.cluster.control", s, segmentRule))
	}
	segs := strings.Split(z, ".")
	for i, seg := range segs {
		if seg == "" {
			return "", newError(ErrInvalidZone, nil, fmt.Sprintf("zone %q: segment %d is empty; want dotted segments matching %s", z, i+1, segmentRule))
		}
		if !validSegment(seg) {
			return "", newError(ErrInvalidZone, nil, fmt.Sprintf("zone %q: segment %q must match %s", z, seg, segmentRule))
		}
	}
	if segs[0] != Root {
		z = Root + "." + z
	}
	return z, nil
}

// validSegment reports whether seg is non-empty and matches [a-z0-9_-]+.
func validSegment(seg string) bool {
	if seg == "" {
		return false
	}
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// Contains reports whether nodeZone is zone itself or lies below it, that
// is, equals zone or starts with zone+".". This is how plasmactl-zone
// matches nodes to a zone (NodesForZone). Both arguments are compared as
// given; pass paths through [Normalize] first.
func Contains(zone, nodeZone string) bool {
	return nodeZone == zone || (len(nodeZone) > len(zone) && strings.HasPrefix(nodeZone, zone) && nodeZone[len(zone)] == '.')
}
