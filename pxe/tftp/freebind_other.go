//go:build !linux

package tftp

import "syscall"

// freebind does nothing where the system has no free-bind option.
func freebind(string, string, syscall.RawConn) error { return nil }
