package registry

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/answer"
)

// ErrPinTaken is wrapped (with [ErrInvalidRegistration]) by the error of
// [Registrations.Register] for a pin another pending registration holds; the
// error is a [*PinTakenError].
var ErrPinTaken = errors.New("pin held by another pending registration")

// Pin kinds, as [Pin.Kind] names them.
const (
	PinMAC    = "mac"
	PinSerial = "serial"
	PinUUID   = "uuid"
)

// Pin is one identifier a registration pins its machine by.
type Pin struct {
	// Kind is PinMAC, PinSerial or PinUUID.
	Kind string
	// Value is the MAC (normalised), serial (as registered) or UUID.
	Value string
}

// String returns "mac aa:bb:cc:dd:ee:ff".
func (p Pin) String() string { return p.Kind + " " + p.Value }

// same reports whether two pins name the same machine: serials and UUIDs
// compare without case, as [Match] compares them.
func (p Pin) same(q Pin) bool {
	return p.Kind == q.Kind && strings.EqualFold(strings.TrimSpace(p.Value), strings.TrimSpace(q.Value))
}

// Pins returns the registration's pins: its MACs, then serial and UUID.
func (r Registration) Pins() []Pin {
	var out []Pin
	for _, m := range r.MACs {
		if n, ok := answer.CanonicalMAC(m); ok {
			out = append(out, Pin{PinMAC, n})
		}
	}
	if r.Serial != "" {
		out = append(out, Pin{PinSerial, r.Serial})
	}
	if r.UUID != "" {
		out = append(out, Pin{PinUUID, r.UUID})
	}
	return out
}

// PinTakenError is the refusal of a registration whose pin another
// pending registration holds: the machine would get one of the two
// silently.
type PinTakenError struct {
	// Name is the registration refused.
	Name string
	// Pin is the pin in question.
	Pin Pin
	// Holder is the pending registration holding it.
	Holder string
}

// Error names the pin and its holder.
func (e *PinTakenError) Error() string {
	return fmt.Sprintf("registration %s: %s is already pinned by pending registration %s (unregister it, or replace to move the pin)", e.Name, e.Pin, e.Holder)
}

// Unwrap returns [ErrPinTaken] and [ErrInvalidRegistration].
func (e *PinTakenError) Unwrap() []error { return []error{ErrPinTaken, ErrInvalidRegistration} }

// Collision is a pin that several pending registrations hold: files
// written by hand can do that, [Registrations.Register] refuses it.
type Collision struct {
	// Pin is the shared pin.
	Pin Pin
	// Names are the registrations holding it, sorted.
	Names []string
}

// String says which registrations share which pin.
func (c Collision) String() string {
	return fmt.Sprintf("%s is pinned by %s", c.Pin, strings.Join(c.Names, " and "))
}

// Collisions returns the pins several of the pending registrations hold,
// in the order of their first holder's pins. It is a pure function.
func Collisions(pending []Registration) []Collision {
	var out []Collision
	for i, r := range pending {
		for _, p := range r.Pins() {
			if slices.ContainsFunc(out, func(c Collision) bool { return c.Pin.same(p) }) {
				continue
			}
			c := Collision{Pin: p, Names: []string{r.Name}}
			for _, o := range pending[i+1:] {
				if o.Name != r.Name && slices.ContainsFunc(o.Pins(), p.same) {
					c.Names = append(c.Names, o.Name)
				}
			}
			if len(c.Names) > 1 {
				slices.Sort(c.Names)
				out = append(out, c)
			}
		}
	}
	return out
}

// MatchingAll returns every pending registration that pins one of the
// machine's identifiers (posted MACs, serial, UUID), sorted by name. More
// than one means the interlock cannot tell which is meant.
func MatchingAll(pending []Registration, macs []string, serial, uuid string) []string {
	var posted []Pin
	for _, m := range macs {
		if n, ok := answer.CanonicalMAC(m); ok {
			posted = append(posted, Pin{PinMAC, n})
		}
	}
	if s := strings.TrimSpace(serial); !IsPlaceholderSerial(s) {
		posted = append(posted, Pin{PinSerial, s})
	}
	if u := strings.TrimSpace(uuid); !IsPlaceholderUUID(u) {
		posted = append(posted, Pin{PinUUID, u})
	}
	var names []string
	for _, r := range pending {
		for _, p := range r.Pins() {
			if slices.ContainsFunc(posted, p.same) && !slices.Contains(names, r.Name) {
				names = append(names, r.Name)
			}
		}
	}
	slices.Sort(names)
	return names
}

// Change is one field a re-registration changes.
type Change struct {
	// Field is "macs", "serial", "uuid", "boot disk", "pools" or "ssh
	// keys".
	Field string
	// Old and New are the values before and after, as list and status
	// show them; "-" for none. SSH keys are counted, not shown.
	Old, New string
}

// Changes returns what replacing old with new changes, in the order of
// the fields above; nothing for an identical registration.
func Changes(old, new Registration) []Change {
	list := func(s []string) string {
		if len(s) == 0 {
			return "-"
		}
		return strings.Join(s, ",")
	}
	one := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	pools := func(r Registration) string {
		var s []string
		for _, p := range r.Pools {
			s = append(s, p.String())
		}
		return list(s)
	}
	var out []Change
	add := func(field, o, n string) {
		if o != n {
			out = append(out, Change{field, o, n})
		}
	}
	add("macs", list(old.MACs), list(new.MACs))
	add("serial", one(old.Serial), one(new.Serial))
	add("uuid", one(old.UUID), one(new.UUID))
	add("boot disk", old.BootDisk.String(), new.BootDisk.String())
	add("pools", pools(old), pools(new))
	add("ssh keys", fmt.Sprintf("%d", len(old.SSHKeys)), fmt.Sprintf("%d", len(new.SSHKeys)))
	bmcOf := func(r Registration) string {
		if r.BMC == nil {
			return "-"
		}
		return r.BMC.URL
	}
	add("bmc", bmcOf(old), bmcOf(new))
	add("secure boot", fmt.Sprint(old.SecureBoot), fmt.Sprint(new.SecureBoot))
	return out
}
