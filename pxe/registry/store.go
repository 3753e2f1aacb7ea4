package registry

import "fmt"

// MaxRegistrationSize bounds a registration's encoding: 1 MiB. [Prepare]
// refuses a larger one, which a store could not read back.
const MaxRegistrationSize = 1 << 20

// Broken is a registration file that cannot be read: malformed JSON, an
// invalid field, a name that does not match its file, or not a regular
// file. While one is pending it blocks the only-pending match (rule 2 of
// [Match]): it may pin the machine that asks.
type Broken struct {
	// Name is the file's stem, the registration's name as far as known.
	Name string `json:"name"`
	// File is the file's path.
	File string `json:"file"`
	// Line is the line of the first error, when one is known; else 0.
	Line int `json:"line,omitempty"`
	// Err is why it cannot be read.
	Err error `json:"-"`
}

// Error says where and why, as "registrations/a.json line 3: …".
func (b Broken) Error() string {
	where := b.File
	if b.Line > 0 {
		where += fmt.Sprintf(" line %d", b.Line)
	}
	return where + ": " + b.Err.Error()
}
