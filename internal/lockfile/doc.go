// Package lockfile serialises operations across processes with an advisory
// flock(2) on a file that records who holds it.
//
// The kernel releases the lock when its holder dies, so a killed process
// never leaves a platform locked. It does not protect against writers that
// do not take the lock.
package lockfile
