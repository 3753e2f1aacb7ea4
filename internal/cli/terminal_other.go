//go:build !linux

package cli

// isTerminalFd reports true: without Linux's terminal ioctl a file is
// taken for a terminal, and a prompt reads it as before.
func isTerminalFd(uintptr) bool { return true }
