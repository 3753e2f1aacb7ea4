package cli

import (
	"io"
	"os"
)

// IsTerminal reports whether r is a person's terminal, the only input a
// confirmation prompt may wait on: a stream that says (Launchr's
// IsTerminal), a file that is a terminal device, or a reader that is
// neither a file nor a stream (answers an embedding program gives).
// A pipe, a regular file and /dev/null are not.
func IsTerminal(r io.Reader) bool {
	switch s := r.(type) {
	case nil:
		return false
	case interface{ IsTerminal() bool }:
		return s.IsTerminal()
	case *os.File:
		return isTerminalFd(s.Fd())
	}
	return true
}
