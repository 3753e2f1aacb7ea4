package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/plasmactl/plasma-node/pxe/secret"
)

// kindSite is the rows of the site's named secrets.
const kindSite = "site"

var _ secret.Site = (*Secrets)(nil)

// SetSiteSecret keeps value as the site secret name, sealed with the
// host's key as the nodes' passwords are, replacing an older one.
func (s *Secrets) SetSiteSecret(ctx context.Context, name, value string) error {
	if err := secret.ValidateSiteName(name); err != nil {
		return err
	}
	if err := secret.CheckSiteValue(name, value); err != nil {
		return err
	}
	return s.put(ctx, kindSite, name, value)
}

// ReadSiteSecret returns the site secret name; none kept wraps
// [secret.ErrNoSiteSecret], one sealed with another key is a
// [*KeyError].
func (s *Secrets) ReadSiteSecret(ctx context.Context, name string) (string, error) {
	if err := secret.ValidateSiteName(name); err != nil {
		return "", err
	}
	v, err := s.get(ctx, kindSite, name)
	var missing *missingError
	if errors.As(err, &missing) {
		return "", fmt.Errorf("site secret %s: %w (set it with secret set %s)", name, secret.ErrNoSiteSecret, name)
	}
	return v, err
}

// SiteSecretNames returns the names of the site secrets kept, sorted.
func (s *Secrets) SiteSecretNames(ctx context.Context) ([]string, error) {
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	rows, err := s.db.Pool.Query(ctx, "SELECT name FROM np_secrets WHERE kind = $1 ORDER BY name COLLATE \"C\"", kindSite)
	if err != nil {
		return nil, fmt.Errorf("site secrets: %w", s.db.Check(err))
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("site secrets: %w", s.db.Check(err))
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("site secrets: %w", s.db.Check(err))
	}
	return names, nil
}

// RemoveSiteSecret removes the site secret name; none kept wraps
// [secret.ErrNoSiteSecret].
func (s *Secrets) RemoveSiteSecret(ctx context.Context, name string) error {
	if err := secret.ValidateSiteName(name); err != nil {
		return err
	}
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	tag, err := s.db.Pool.Exec(ctx, "DELETE FROM np_secrets WHERE kind = $1 AND name = $2", kindSite, name)
	if err != nil {
		return fmt.Errorf("remove site secret %s: %w", name, s.db.Check(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("remove site secret %s: %w", name, secret.ErrNoSiteSecret)
	}
	return nil
}
