package client

import (
	"context"
	"net/url"

	"github.com/plasmactl/plasma-node/pxe/apitype"
)

// SiteSecretNames returns the names of the server's site secrets (admin);
// never a value.
func (c *Client) SiteSecretNames(ctx context.Context) ([]string, error) {
	var out apitype.SiteSecrets
	err := c.do(ctx, request{method: "GET", path: "/secrets", op: opSecret, retry: true}, &out)
	return out.Names, err
}

// SetSiteSecret keeps value as the server's site secret name (admin).
// Refusals match secret.ErrInvalidName and secret.ErrInvalidPassword,
// as the local ones do; the value is sent in the request's body only.
func (c *Client) SetSiteSecret(ctx context.Context, name, value string) error {
	return c.do(ctx, request{method: "PUT", path: "/secrets/" + url.PathEscape(name), body: apitype.SiteSecret{Value: value}, op: opSecret, retry: true}, nil)
}

// RemoveSiteSecret removes the server's site secret name (admin); none
// of that name matches secret.ErrNoSiteSecret.
func (c *Client) RemoveSiteSecret(ctx context.Context, name string) error {
	return c.do(ctx, request{method: "DELETE", path: "/secrets/" + url.PathEscape(name), op: opSecret, retry: true}, nil)
}
