package registry

import (
	"slices"
	"time"
)

// RegisterOptions tunes [Registrations.Register]. The zero value refuses a pin
// another pending registration holds.
type RegisterOptions struct {
	// Replace moves pins: a MAC, serial or UUID another pending
	// registration holds is taken from it. A registration left pinning
	// nothing is removed, as it could otherwise answer any machine that is
	// alone in the window.
	Replace bool
}

// RegisterResult is what [Registrations.Register] changed besides writing the
// registration.
type RegisterResult struct {
	// Previous is the pending registration of the same name it replaced,
	// nil for none; see [Changes] for what differs.
	Previous *Registration
	// Moved are the pins taken from other registrations (Replace).
	Moved []PinMove
}

// PinMove is a pin taken from another pending registration.
type PinMove struct {
	// Pin is the pin taken.
	Pin Pin
	// From is the registration that held it.
	From string
	// Removed says From was left pinning nothing and was removed.
	Removed bool
}

// Prepare returns r as a store registers it, or why it cannot: its MACs
// normalised and deduplicated, Created set to now when zero, Consumed
// cleared; its name a host name ([ValidateHostname]), its fields valid
// ([Registration.Validate]) and its encoding within
// [MaxRegistrationSize]. Errors wrap the sentinels listed at
// [ErrInvalidRegistration]. Every [Registrations] implementation's
// Register starts with it.
func Prepare(r Registration) (Registration, error) {
	r, err := r.normalize()
	if err != nil {
		return r, err
	}
	if r.Created.IsZero() {
		r.Created = time.Now().UTC().Truncate(time.Second)
	}
	r.Consumed = nil
	// The host name rule first: it is the one a new registration's name
	// is told (Validate's looser one is for TAPPaaS's older files).
	if err := ValidateHostname(r.Name); err != nil {
		return r, err
	}
	if err := r.Validate(); err != nil {
		return r, err
	}
	data, err := EncodeRegistration(r)
	if err != nil {
		return r, err
	}
	if len(data) > MaxRegistrationSize {
		return r, invalid(ErrInvalidRegistration, "registration %s is %d bytes encoded, more than %d", r.Name, len(data), MaxRegistrationSize)
	}
	return r, nil
}

// PinTake is what registering a registration does to another pending one
// whose pins it takes ([TakePins]).
type PinTake struct {
	// Left is the other registration without the pins taken.
	Left Registration
	// Moved are the pins taken from it; Removed is set on each when Left
	// pins nothing, and the store then removes it.
	Moved []PinMove
}

// TakePins works out the pins r takes from the other pending
// registrations: without replace, a pin one of them holds is refused with
// a [*PinTakenError]; with replace, each holder is returned as it is
// left. A store runs it under the lock its Register holds, on the pending
// registrations it read there, and writes or removes each Left.
func TakePins(r Registration, pending []Registration, replace bool) ([]PinTake, error) {
	var out []PinTake
	for _, o := range pending {
		if o.Name == r.Name {
			continue
		}
		var taken []Pin
		for _, p := range r.Pins() {
			if slices.ContainsFunc(o.Pins(), p.same) {
				if !replace {
					return nil, &PinTakenError{Name: r.Name, Pin: p, Holder: o.Name}
				}
				taken = append(taken, p)
			}
		}
		if len(taken) == 0 {
			continue
		}
		left := withoutPins(o, taken)
		t := PinTake{Left: left}
		for _, p := range taken {
			t.Moved = append(t.Moved, PinMove{Pin: p, From: o.Name, Removed: !left.Pinned()})
		}
		out = append(out, t)
	}
	return out, nil
}

// withoutPins returns r without the pins given.
func withoutPins(r Registration, pins []Pin) Registration {
	r.MACs = slices.DeleteFunc(slices.Clone(r.MACs), func(m string) bool {
		return slices.ContainsFunc(pins, Pin{PinMAC, m}.same)
	})
	if slices.ContainsFunc(pins, Pin{PinSerial, r.Serial}.same) {
		r.Serial = ""
	}
	if slices.ContainsFunc(pins, Pin{PinUUID, r.UUID}.same) {
		r.UUID = ""
	}
	return r
}
