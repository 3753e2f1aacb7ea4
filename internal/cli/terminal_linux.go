package cli

import "golang.org/x/sys/unix"

// isTerminalFd reports whether fd is a terminal: whether it has terminal
// attributes.
func isTerminalFd(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
	return err == nil
}
