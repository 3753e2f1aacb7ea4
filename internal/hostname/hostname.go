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

// Compare orders names as people read them: runs of digits by their
// value, so tappaas3 comes before tappaas10; equal values keep the
// shorter run first (pve01 after pve1), then byte order decides.
func Compare(a, b string) int {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return cmpInt(len(na), len(nb))
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			if da != db {
				return cmpInt(da, db)
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmpInt(int(a[0]), int(b[0]))
		}
		a, b = a[1:], b[1:]
	}
	return cmpInt(len(a), len(b))
}

func digits(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
