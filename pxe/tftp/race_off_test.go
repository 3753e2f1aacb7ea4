//go:build !race

package tftp

const raceEnabled = false
