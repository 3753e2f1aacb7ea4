package hostname

import (
	"fmt"
	"strings"
)

// DomainRule is the domain rule as every message states it.
const DomainRule = "dot-separated labels of a-z, 0-9 and '-' (1 to 63 characters each, no leading or trailing '-'), 253 characters at most, such as example.com"

// CheckDomain reports why d is not a DNS domain by [DomainRule] (RFC 1123
// host name syntax, lower-case ASCII only: an internationalised name is
// given in its xn-- form), naming the label at fault; nil when it is one.
// The error does not repeat d or the rule: the caller names the field.
func CheckDomain(d string) error {
	switch {
	case d == "":
		return fmt.Errorf("empty")
	case len(d) > 253:
		return fmt.Errorf("%d characters, over 253", len(d))
	}
	for i, l := range strings.Split(d, ".") {
		if err := checkLabel(l); err != nil {
			return fmt.Errorf("label %d %q: %w", i+1, l, err)
		}
	}
	return nil
}

// checkLabel says what is wrong with one label of a domain.
func checkLabel(l string) error {
	switch {
	case l == "":
		return fmt.Errorf("empty (two dots in a row, or a dot at an end)")
	case len(l) > 63:
		return fmt.Errorf("%d characters, over 63", len(l))
	case l[0] == '-' || l[len(l)-1] == '-':
		return fmt.Errorf("starts or ends with '-'")
	}
	for _, r := range l {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			if r >= 'A' && r <= 'Z' {
				return fmt.Errorf("upper-case %q: write it in lower case", r)
			}
			return fmt.Errorf("character %q is not a-z, 0-9 or '-'", r)
		}
	}
	return nil
}
