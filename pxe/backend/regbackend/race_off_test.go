//go:build !race

package regbackend

const raceEnabled = false
