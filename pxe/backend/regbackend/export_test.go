package regbackend

// What the external tests (package regbackend_test, which open the
// state folder's stores, pxe/store/folder) see of the package's insides.

// ErrNoMatchRefusal is the refusal of a machine no registration matches.
var ErrNoMatchRefusal = errNoMatch

// RaceEnabled says the race detector is on.
const RaceEnabled = raceEnabled

// AllowBusy reports whether b re-reads its allowlist in the background.
func AllowBusy(b *Backend) bool { return b.allowSince.Load() != 0 }
