package secrettest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/plasmactl/plasma-node/internal/storetest"
	"github.com/plasmactl/plasma-node/pxe/secret"
	"github.com/plasmactl/plasma-node/pxe/secret/secrettest"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// siteHarness runs the site suite on folder.SiteSecrets in temporary
// state folders.
func siteHarness(tb testing.TB, wrap func(*folder.SiteSecrets) secret.Site) secrettest.SiteHarness {
	return inFolders(func(secrettest.T) (secret.Site, string) {
		f := folder.OpenSiteSecrets(tb.TempDir())
		if wrap != nil {
			return wrap(f), f.Dir()
		}
		return f, f.Dir()
	})
}

func TestFolderSiteSecretsConformance(t *testing.T) {
	secrettest.RunSite(t, siteHarness(t, nil))
}

// brokenSite wraps the folder's site secrets with one fault.
type brokenSite struct {
	*folder.SiteSecrets
	fault string
}

func (b *brokenSite) SetSiteSecret(ctx context.Context, name, v string) error {
	switch b.fault {
	case "world-readable":
		err := b.SiteSecrets.SetSiteSecret(ctx, name, v)
		os.Chmod(filepath.Join(b.Dir(), name+".secret"), 0o644)
		return err
	case "quotes the value":
		if err := b.SiteSecrets.SetSiteSecret(ctx, name, v); err != nil {
			return fmt.Errorf("%w (value %q)", err, v)
		}
		return nil
	case "one file for all":
		if secret.ValidateSiteName(name) == nil {
			name = "all"
		}
	case "keeps a bad value":
		if secret.CheckSiteValue(name, v) != nil && secret.ValidateSiteName(name) == nil {
			os.MkdirAll(b.Dir(), 0o700)
			os.WriteFile(filepath.Join(b.Dir(), name+".secret"), []byte(v), 0o600)
		}
	}
	return b.SiteSecrets.SetSiteSecret(ctx, name, v)
}

func (b *brokenSite) ReadSiteSecret(ctx context.Context, name string) (string, error) {
	if b.fault == "one file for all" && secret.ValidateSiteName(name) == nil {
		name = "all"
	}
	return b.SiteSecrets.ReadSiteSecret(ctx, name)
}

func (b *brokenSite) SiteSecretNames(ctx context.Context) ([]string, error) {
	names, err := b.SiteSecrets.SiteSecretNames(ctx)
	if b.fault == "lists values" {
		for i, n := range names {
			v, _ := b.SiteSecrets.ReadSiteSecret(ctx, n)
			names[i] = n + "=" + v
		}
	}
	return names, err
}

func (b *brokenSite) RemoveSiteSecret(ctx context.Context, name string) error {
	if b.fault == "remove keeps" {
		return nil
	}
	return b.SiteSecrets.RemoveSiteSecret(ctx, name)
}

// TestTheSiteSuiteFailsABrokenStore feeds the site suite a folder with
// one fault at a time: each is found by the check named.
func TestTheSiteSuiteFailsABrokenStore(t *testing.T) {
	storetest.RejectsFaults(t, secrettest.SiteChecks(), [][2]string{
		{"world-readable", "SiteKeptPrivately"},
		{"quotes the value", "SiteRefusals"},
		{"one file for all", "SiteRoundTrip"},
		{"one file for all", "SiteConcurrentWriters"},
		{"keeps a bad value", "SiteRefusals"},
		{"lists values", "SiteNamesOnly"},
		{"remove keeps", "SiteRoundTrip"},
		{"remove keeps", "SiteNamesOnly"},
	}, func(t *testing.T, fault string) secrettest.SiteHarness {
		return siteHarness(t, func(f *folder.SiteSecrets) secret.Site { return &brokenSite{SiteSecrets: f, fault: fault} })
	})
}
