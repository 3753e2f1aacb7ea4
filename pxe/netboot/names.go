package netboot

import (
	"errors"
	"regexp"

	"github.com/plasmactl/plasma-node/answer"
)

var nodeNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,63}$`)

// normalizeMAC returns a MAC address as the timeline keys it
// ([answer.CanonicalMAC]: lower case with colons).
func normalizeMAC(s string) (string, error) {
	m, ok := answer.CanonicalMAC(s)
	if !ok {
		return "", errors.New("not a MAC address")
	}
	return m, nil
}

// validateNodeName checks that a node name is safe to show and to key
// the timeline by: 1 to 63 letters, digits, '-' or '_'.
func validateNodeName(name string) error {
	if !nodeNameRE.MatchString(name) {
		return errors.New("not a node name")
	}
	return nil
}
