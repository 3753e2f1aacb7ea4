package registrar

import (
	"context"

	"github.com/plasmactl/plasma-node/pxe/secret"

	"github.com/plasmactl/plasma-node/pxe/client"
)

// SiteSecrets manages the site's named secrets, on this host ([*Local])
// or through the API (a *client.Client, admin), in one way: values are
// set and removed, only names are listed.
type SiteSecrets interface {
	// SetSiteSecret keeps value as the secret name (secret.Site).
	SetSiteSecret(ctx context.Context, name, value string) error
	// SiteSecretNames returns the secrets' names, sorted.
	SiteSecretNames(ctx context.Context) ([]string, error)
	// RemoveSiteSecret removes the secret name (secret.ErrNoSiteSecret).
	RemoveSiteSecret(ctx context.Context, name string) error
}

var (
	_ SiteSecrets = (*Local)(nil)
	_ SiteSecrets = (*client.Client)(nil)
)

// siteSecrets opens the stores' site secrets.
func (l *Local) siteSecrets(ctx context.Context) (secret.Site, error) {
	stores, err := l.Stores(ctx)
	if err != nil {
		return nil, err
	}
	return stores.SiteSecrets(ctx)
}

// SetSiteSecret keeps value as the stores' site secret name.
func (l *Local) SetSiteSecret(ctx context.Context, name, value string) error {
	site, err := l.siteSecrets(ctx)
	if err != nil {
		return err
	}
	return site.SetSiteSecret(ctx, name, value)
}

// SiteSecretNames returns the names of the stores' site secrets.
func (l *Local) SiteSecretNames(ctx context.Context) ([]string, error) {
	site, err := l.siteSecrets(ctx)
	if err != nil {
		return nil, err
	}
	return site.SiteSecretNames(ctx)
}

// RemoveSiteSecret removes the stores' site secret name.
func (l *Local) RemoveSiteSecret(ctx context.Context, name string) error {
	site, err := l.siteSecrets(ctx)
	if err != nil {
		return err
	}
	return site.RemoveSiteSecret(ctx, name)
}
