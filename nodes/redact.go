package nodes

import "strings"

// Redacted is shown in place of a credential.
const Redacted = "(redacted)"

// Redacted returns a copy of the platform whose credentials are replaced
// by [Redacted], so it can be shown. Keyring references such as
// "{{ .keyring.ovh_client_id }}" are not secrets and are kept.
func (p *Platform) Redacted() *Platform {
	c := clonePlatform(p)
	c.Infrastructure.API = c.Infrastructure.API.redacted()
	c.DNS.API = c.DNS.API.redacted()
	for _, f := range []*string{&c.Infrastructure.State.ConnStr, &c.Infrastructure.State.AccessKey, &c.Infrastructure.State.SecretKey, &c.Infrastructure.ProvisionerToken} {
		if *f != "" {
			*f = Redacted
		}
	}
	return c
}

func (a API) redacted() API {
	for _, f := range []*string{&a.Token, &a.ClientID, &a.ClientSecret, &a.AccessKey, &a.SecretKey} {
		if *f != "" && !IsKeyringRef(*f) {
			*f = Redacted
		}
	}
	return a
}

// IsKeyringRef reports whether a credential value is a Launchr keyring
// reference ("{{ .keyring.<key> }}") rather than the secret itself.
func IsKeyringRef(v string) bool {
	v = strings.TrimSpace(v)
	return strings.HasPrefix(v, "{{") && strings.HasSuffix(v, "}}") && strings.Contains(v, ".keyring.")
}
