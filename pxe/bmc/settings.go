package bmc

import (
	"fmt"
	"slices"
	"strings"
)

// DefaultCipherSuite is the IPMI RMCP+ cipher suite used unless another is
// asked for: HMAC-SHA1 authentication and integrity, AES-CBC-128.
const DefaultCipherSuite = 3

// ipmiSuites are the RMCP+ cipher suites an IPMI driver accepts: every
// suite with authentication that the IPMI 2.0 table defines. Suite 0
// (none) is not among them.
var ipmiSuites = []int{1, 2, 3, 6, 7, 8, 11, 12, 15, 16, 17}

// Privilege levels an IPMI session may ask for.
const (
	// PrivilegeOperator is enough for chassis control; the default.
	PrivilegeOperator = "operator"
	// PrivilegeAdministrator is for BMCs that give operators no chassis
	// control.
	PrivilegeAdministrator = "administrator"
)

// IPMISettings returns the cipher suite and privilege an IPMI session
// uses for these options (0 and "" are the defaults: 3 and operator).
// Errors wrap [ErrInvalidEndpoint].
func IPMISettings(suite int, privilege string) (int, string, error) {
	if suite == 0 {
		suite = DefaultCipherSuite
	}
	if !slices.Contains(ipmiSuites, suite) {
		return 0, "", fmt.Errorf("%w: IPMI cipher suite %d (want 1-3, 6-8, 11, 12 or 15-17; 3 is the default)", ErrInvalidEndpoint, suite)
	}
	switch strings.ToLower(privilege) {
	case "", PrivilegeOperator:
		return suite, PrivilegeOperator, nil
	case PrivilegeAdministrator, "admin":
		return suite, PrivilegeAdministrator, nil
	}
	return 0, "", fmt.Errorf("%w: IPMI privilege %q (want operator or administrator; user cannot control power)", ErrInvalidEndpoint, privilege)
}

// ValidateIPMI checks a cipher suite and privilege as an IPMI driver
// would; errors wrap [ErrInvalidEndpoint].
func ValidateIPMI(suite int, privilege string) error {
	_, _, err := IPMISettings(suite, privilege)
	return err
}

// ParseCipherSuite reads an IPMI cipher suite number. Suite 0 (no
// authentication: a BMC then takes any password) is refused, as are
// numbers outside the IPMI 2.0 table. Errors wrap [ErrInvalidEndpoint].
func ParseCipherSuite(s string) (int, error) {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil || fmt.Sprint(n) != strings.TrimSpace(s) {
		return 0, fmt.Errorf("%w: IPMI cipher suite %q is not a number (3 is the default)", ErrInvalidEndpoint, s)
	}
	if n == 0 {
		return 0, fmt.Errorf("%w: IPMI cipher suite 0 has no authentication (the BMC takes any password) and is refused; use 3 or 17", ErrInvalidEndpoint)
	}
	if !slices.Contains(ipmiSuites, n) {
		return 0, fmt.Errorf("%w: IPMI cipher suite %d (want 1-3, 6-8, 11, 12 or 15-17; 3 is the default)", ErrInvalidEndpoint, n)
	}
	return n, nil
}
