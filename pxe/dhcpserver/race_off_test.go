//go:build !race

package dhcpserver

const raceEnabled = false
