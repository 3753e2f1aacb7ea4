package folder

// maxFile bounds a file read whole (an install report, the tokens and
// when they were used): a report's webhook body is bounded at 1 MiB,
// and what is kept of it is smaller.
const maxFile = 1 << 20

// invalidError is a refusal of what a file or a call holds, in its own
// words; it matches its store's sentinel (is).
type invalidError struct {
	msg string
	is  error
}

func (e *invalidError) Error() string { return e.msg }
func (e *invalidError) Unwrap() error { return e.is }
