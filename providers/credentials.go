package providers

import (
	"fmt"
	"strings"

	"github.com/plasmactl/plasma-node/nodes"
)

// Credential is one environment variable a provider needs, for
// [Plugin].
type Credential struct {
	// Env is the environment variable tofu reads, like "HCLOUD_TOKEN".
	Env string
	// Field names the platform.yaml fallback for messages, like
	// "infrastructure.api.token"; empty when there is none.
	Field string
	// Value is the fallback's value from platform.yaml.
	Value string
	// Optional credentials may be missing.
	Optional bool
}

// resolveCredentials returns the value of each credential: from getenv
// when set there, else its platform.yaml Value, never in an error.
// Errors: [ErrKeyringRef] for a "{{ .keyring.* }}" value;
// [ErrNoCredentials] naming every missing variable that is not optional.
func resolveCredentials(provider string, getenv func(string) string, creds []Credential) (map[string]string, error) {
	env := map[string]string{}
	var missing []string
	for _, c := range creds {
		v, from := strings.TrimSpace(getenv(c.Env)), "environment variable "+c.Env
		if v == "" {
			v, from = strings.TrimSpace(c.Value), c.Field+" in platform.yaml"
		}
		if v == "" {
			if !c.Optional {
				missing = append(missing, c.Env)
			}
			continue
		}
		if nodes.IsKeyringRef(v) {
			return nil, fmt.Errorf("%s credentials: %s: %w: plasma-node does not read keyrings and never sends a reference to the cloud; set the environment variable %s to the value instead", provider, from, ErrKeyringRef, c.Env)
		}
		env[c.Env] = v
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s credentials: %w: set the environment variable(s) %s (or the matching infrastructure.api fields in platform.yaml)", provider, ErrNoCredentials, strings.Join(missing, ", "))
	}
	return env, nil
}
