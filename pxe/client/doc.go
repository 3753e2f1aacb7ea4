// Package client is the Go client of node-provisioner's management API
// (package api): node-provisioner's remote mode and plasma-node's
// bare-metal provider use it, and other programs may import it.
//
//	c, err := client.New(client.Options{
//		URL:         "https://provisioner.example:8091",
//		Token:       os.Getenv("NODE_PROVISIONER_TOKEN"),
//		Fingerprint: "AB:CD:…", // node-provisioner tls fingerprint; empty trusts the system pool
//	})
//	res, err := c.Register(ctx, reg, registry.RegisterOptions{})
//
// With a Fingerprint the client trusts exactly the server certificate of
// that SHA-256 fingerprint and refuses any other during the TLS
// handshake, before the request (and its token) is sent. Reads are
// retried with backoff when the connection fails; Register sends an
// Idempotency-Key, the same on each of its retries, so that a retry
// never registers twice; other changes are never retried. Replies are
// bounded in size.
//
// Refusals are [*Error] values carrying the status, the server's message
// and the field at fault; errors.Is maps them to the domain's errors:
// 404 to registry.ErrNotFound, an invalid registration (400, 422) to
// registry.ErrInvalidRegistration (and the field's own error, such as
// registry.ErrInvalidMAC), a pin another registration holds (409) to
// registry.ErrPinTaken, a window already open (409) to window.ErrOpen, a
// reinstall while the window is closed (409) to window.ErrClosed,
// 401 to [ErrUnauthorized] and 403 to [ErrForbidden]; a token's
// refusals to apitoken's errors (ErrNotFound, ErrExists, ErrInvalidName,
// ErrInvalidScope).
package client
