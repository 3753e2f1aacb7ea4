package api_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/secret"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
	"github.com/plasmactl/plasma-node/pxe/tlscert"
)

// TestSiteSecretsNeedTheAdminScopeAndAreWriteOnly: the /secrets
// endpoints take an admin token only; through the client a secret is
// set, listed by name (no reply holds a value), refused as the local
// store refuses it, and removed.
func TestSiteSecretsNeedTheAdminScopeAndAreWriteOnly(t *testing.T) {
	ctx := t.Context()
	var site *folder.SiteSecrets
	e := newEnv(t, func(c *api.Config) {
		site = folder.OpenSiteSecrets(stateOf(c))
		c.SiteSecrets = site
	})
	for _, tok := range []string{"read", "register"} {
		if r := e.do(t, "GET", api.Prefix+"/secrets", e.tokens[tok], ""); r.status != http.StatusForbidden {
			t.Errorf("GET /secrets with a %s token: %d, want 403", tok, r.status)
		}
		if r := e.do(t, "PUT", api.Prefix+"/secrets/x", e.tokens[tok], `{"value":"v-Pa55"}`); r.status != http.StatusForbidden {
			t.Errorf("PUT /secrets/x with a %s token: %d, want 403", tok, r.status)
		}
	}
	c, err := client.New(client.Options{URL: e.ts.URL, Token: e.tokens["admin"], Fingerprint: tlscert.Fingerprint(e.ts.Certificate().Raw)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetSiteSecret(ctx, "bmc-rack1", "rack1-Pa55"); err != nil {
		t.Fatal(err)
	}
	if v, err := site.ReadSiteSecret(ctx, "bmc-rack1"); err != nil || v != "rack1-Pa55" {
		t.Errorf("kept %q, %v", v, err)
	}
	names, err := c.SiteSecretNames(ctx)
	if d := cmp.Diff([]string{"bmc-rack1"}, names); err != nil || d != "" {
		t.Errorf("names (-want +got):\n%s%v", d, err)
	}
	if r := e.do(t, "GET", api.Prefix+"/secrets", e.tokens["admin"], ""); strings.Contains(r.body, "Pa55") {
		t.Errorf("the listing holds a value: %s", r.body)
	}
	if err := c.SetSiteSecret(ctx, "Bad Name", "x-Pa55"); !errors.Is(err, secret.ErrInvalidName) || strings.Contains(err.Error(), "Pa55") {
		t.Errorf("a bad name = %v, want ErrInvalidName quoting no value", err)
	}
	if err := c.SetSiteSecret(ctx, "two", "two\nlines-Pa55"); !errors.Is(err, secret.ErrInvalidPassword) || strings.Contains(err.Error(), "Pa55") {
		t.Errorf("a value of two lines = %v, want ErrInvalidPassword quoting no value", err)
	}
	if err := c.RemoveSiteSecret(ctx, "bmc-rack1"); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveSiteSecret(ctx, "bmc-rack1"); !errors.Is(err, secret.ErrNoSiteSecret) {
		t.Errorf("removing none = %v, want ErrNoSiteSecret", err)
	}
}
