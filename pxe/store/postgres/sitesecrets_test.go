package postgres

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
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
	var mu sync.Mutex
	stores := map[secret.Site]*Secrets{}
	open := func(st secrettest.T) *Secrets {
		tb := st.(testing.TB)
		s, err := OpenSecrets(context.Background(), openDB(tb, srv.NewDatabase(tb)), filepath.Join(tb.TempDir(), "store.key"), SecretsOptions{Create: true})
		if err != nil {
			st.Fatalf("open: %v", err)
		}
		return s
	}
	secrettest.RunSite(t, secrettest.SiteHarness{
		New: func(st secrettest.T) secret.Site {
			s := open(st)
			mu.Lock()
			stores[s] = s
			mu.Unlock()
			return s
		},
		Kept: func(t secrettest.T, s secret.Site) []secrettest.Kept {
			mu.Lock()
			defer mu.Unlock()
			return kept(t, stores[s])
		},
	})
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
