package registry

import (
	"errors"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/internal/badinput"
)

// TestSiteDomainRule: the site domain follows the one domain rule, in
// ValidateDomain and in Site.Check, which every window and the daemon
// run; good domains pass.
func TestSiteDomainRule(t *testing.T) {
	for _, bad := range badinput.Domains() {
		t.Run(bad.Name, func(t *testing.T) {
			for what, err := range map[string]error{"ValidateDomain": ValidateDomain(bad.Value), "Site.Check": Site{Domain: bad.Value}.Check()} {
				if !errors.Is(err, ErrInvalidDomain) || !errors.Is(err, ErrInvalidRegistration) || !strings.Contains(err.Error(), bad.Want) {
					t.Errorf("%s(%q) = %v; want ErrInvalidDomain saying %q", what, bad.Value, err, bad.Want)
				}
			}
		})
	}
	for _, good := range []string{"", "mgmt.internal", "lab.example.com", "xn--bcher-kva.example", "a-1.b2"} {
		if err := (Site{Domain: good}).Check(); err != nil {
			t.Errorf("Site{Domain: %q}.Check() = %v; want nil", good, err)
		}
	}
}
