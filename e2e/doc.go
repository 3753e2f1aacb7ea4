// Package e2e holds end-to-end tests: they build the binaries and run them
// as an operator would, against real servers on loopback. It has no
// library code.
package e2e
