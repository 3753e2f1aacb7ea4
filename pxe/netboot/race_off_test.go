//go:build !race

package netboot

const raceEnabled = false
