package folder

import (
	"bytes"
	"context"

	"github.com/plasmactl/plasma-node/pxe/events"
)

var _ events.KindFollower = (*Events)(nil)

// FollowKinds is [Events.Follow] for the events whose kind is one of
// kinds (none: no event). A line of another kind is passed over without
// being decoded, so following the few BMC actions of a log that a
// proxy-DHCP storm fills costs a byte search per line, not a decode.
func (s *Events) FollowKinds(ctx context.Context, after string, kinds []events.Kind, fn func(events.Record) error) error {
	if kinds == nil {
		kinds = []events.Kind{}
	}
	return follow(ctx, s.path, after, kinds, s.poll, s.appended, fn)
}

// mayBeOf reports whether the event line may be of one of kinds: false
// only when every "kind" key in it has a plain string value that is none
// of them. A line with no such key, or whose value has an escape, may be
// (the decoder then decides), so no event of those kinds is passed over.
func mayBeOf(line []byte, kinds []events.Kind) bool {
	const key = `"kind"`
	found := false
	for rest := line; ; {
		i := bytes.Index(rest, []byte(key))
		if i < 0 {
			return !found
		}
		rest = rest[i+len(key):]
		v, res := stringValue(rest)
		switch res {
		case notAKey:
			continue
		case escaped:
			return true
		}
		found = true
		for _, k := range kinds {
			if string(v) == string(k) {
				return true
			}
		}
	}
}

// What [stringValue] found.
const (
	plain   = iota // a string value without escapes
	notAKey        // no colon: "kind" was a value, not a key
	escaped        // a value that is not a plain string
)

// stringValue reads `: "value"` (with JSON's white space) at the start of
// b and returns the value's bytes.
func stringValue(b []byte) ([]byte, int) {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 || b[0] != ':' {
		return nil, notAKey
	}
	b = bytes.TrimLeft(b[1:], " \t\r\n")
	if len(b) == 0 || b[0] != '"' {
		return nil, escaped
	}
	b = b[1:]
	end := bytes.IndexAny(b, "\"\\")
	if end < 0 || b[end] != '"' {
		return nil, escaped
	}
	return b[:end], plain
}
