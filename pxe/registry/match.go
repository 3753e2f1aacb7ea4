package registry

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/plasmactl/plasma-node/answer"
)

// ErrNoMatch is returned (wrapped) by [Match] when no pending registration
// may answer the machine.
var ErrNoMatch = errors.New("no pending registration matches this machine")

// MatchReason says why [Match] chose a registration. It is safe to log.
type MatchReason string

// The reasons [Match] gives.
const (
	// MatchMAC: a posted MAC equals one the registration pins.
	MatchMAC MatchReason = "mac"
	// MatchSerial: the posted DMI serial equals the pinned one.
	MatchSerial MatchReason = "serial"
	// MatchUUID: the posted DMI UUID equals the pinned one.
	MatchUUID MatchReason = "uuid"
	// MatchOnlyPending: nothing was pinned, and this is the only pending
	// registration.
	MatchOnlyPending MatchReason = "only-pending"
)

// Match is the safety interlock: it picks the pending registration that
// may answer the machine that posted macs, serial and uuid (its DMI system
// serial and UUID), or fails with an error wrapping [ErrNoMatch]. It is a
// pure function.
//
//  1. A registration that pins one of the posted MACs (compared without
//     case, after [answer.CanonicalMAC]; unparsable ones are ignored), the posted
//     serial (without case) or the posted UUID (without case) answers; of
//     several, the first in name order. The reason is the first pin that
//     matched, in the order MAC, serial, UUID.
//  2. Otherwise, if exactly one registration is pending and it pins
//     nothing (no MACs, serial or UUID), it answers.
//  3. Otherwise nothing answers.
//
// A posted serial or UUID that firmware ships on many boards ("To Be
// Filled By O.E.M.", all zeros, empty) is never matched.
//
// Rule 2 is stricter than TAPPaaS (reference B.5 rule 2), which serves
// the only pending registration even when it pins other MACs and merely
// logs a warning: here a pinned registration never answers another
// machine, so another host's request cannot consume it.
func Match(pending []Registration, macs []string, serial, uuid string) (Registration, MatchReason, error) {
	posted := make([]string, 0, len(macs))
	for _, m := range macs {
		if n, ok := answer.CanonicalMAC(m); ok {
			posted = append(posted, n)
		}
	}
	serial = strings.TrimSpace(serial)
	if IsPlaceholderSerial(serial) {
		serial = ""
	}
	uuid = strings.ToLower(strings.TrimSpace(uuid))
	if IsPlaceholderUUID(uuid) {
		uuid = ""
	}

	byName := slices.Clone(pending)
	sort.SliceStable(byName, func(i, j int) bool { return byName[i].Name < byName[j].Name })
	for _, r := range byName {
		for _, m := range r.MACs {
			if n, ok := answer.CanonicalMAC(m); ok && slices.Contains(posted, n) {
				return r, MatchMAC, nil
			}
		}
		if serial != "" && r.Serial != "" && strings.EqualFold(strings.TrimSpace(r.Serial), serial) {
			return r, MatchSerial, nil
		}
		if uuid != "" && r.UUID != "" && strings.EqualFold(strings.TrimSpace(r.UUID), uuid) {
			return r, MatchUUID, nil
		}
	}
	if len(byName) == 1 && !byName[0].Pinned() {
		return byName[0], MatchOnlyPending, nil
	}
	return Registration{}, "", fmt.Errorf("%w (%d pending; posted macs %v, serial %q, uuid %q)", ErrNoMatch, len(byName), posted, serial, uuid)
}

// ErrMachineChanged is wrapped by the error of [SameMachine] for a
// machine whose NICs or DMI serial are not those of its discovery.
var ErrMachineChanged = errors.New("the machine changed since its discovery")

// SameMachine checks that the machine that posted macs and serial is the
// one r was made from, when r is [Registration.FromDiscovery]: it posts
// exactly r's MACs (in any order, compared after [answer.CanonicalMAC])
// and, when r pins a serial, that serial (without case). A registration
// made by hand, which may pin one NIC of several, passes. The error
// wraps [ErrMachineChanged] and says what differs.
func SameMachine(r Registration, macs []string, serial string) error {
	if !r.FromDiscovery {
		return nil
	}
	canon := func(ms []string) []string {
		var out []string
		for _, m := range ms {
			if n, ok := answer.CanonicalMAC(m); ok && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		slices.Sort(out)
		return out
	}
	var diff []string
	if now, then := canon(macs), canon(r.MACs); !slices.Equal(now, then) {
		diff = append(diff, fmt.Sprintf("its NICs are %s, discovered %s", strings.Join(now, " "), strings.Join(then, " ")))
	}
	serial = strings.TrimSpace(serial)
	if IsPlaceholderSerial(serial) {
		serial = ""
	}
	if r.Serial != "" && !strings.EqualFold(serial, strings.TrimSpace(r.Serial)) {
		diff = append(diff, fmt.Sprintf("its DMI serial is %s, discovered %s", orNone(serial), r.Serial))
	}
	if len(diff) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrMachineChanged, strings.Join(diff, "; "))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
