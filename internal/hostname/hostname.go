package hostname

import (
	"regexp"
	"strings"
)

// Rule is the name rule as every message states it.
const Rule = "a-z, 0-9 and '-', 1 to 63 characters, no leading or trailing '-', not digits only"

var labelRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// Valid reports whether name follows [Rule]: an RFC 1123 label in lower
// case that is not digits only (which reads as an IPv4 address, and the
// Proxmox installer refuses).
func Valid(name string) bool {
	return labelRE.MatchString(name) && strings.Trim(name, "0123456789") != ""
}
