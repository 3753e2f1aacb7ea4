package postgres

import (
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/secret"
	"github.com/plasmactl/plasma-node/pxe/secret/secrettest"
)

// TestSiteSecretsConformance runs the site secrets' suite on a real
// PostgreSQL, a database and a key file per check, and checks that a
// site secret is sealed at rest.
func TestSiteSecretsConformance(t *testing.T) {
	t.Parallel()
	srv := pgtest.Start(t)
	open := func(st secrettest.T) *Secrets { return openSecrets(st, srv) }
	secrettest.RunSite(t, pgHarness(srv, func(s *Secrets) secret.Site { return s }))
	t.Run("SiteSecretSealedAtRest", func(t *testing.T) {
		s := open(t)
		if err := s.SetSiteSecret(t.Context(), "bmc-admin", "site-plain-Pa55"); err != nil {
			t.Fatal(err)
		}
		var dump string
		if err := s.db.Pool.QueryRow(t.Context(), "SELECT string_agg(kind || name || encode(sealed, 'escape'), ' ') FROM np_secrets").Scan(&dump); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(dump, "plain-Pa55") || !strings.Contains(dump, "bmc-admin") {
			t.Errorf("the rows hold %q; want the name, and the value sealed", dump)
		}
	})
}
