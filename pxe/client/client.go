package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/internal/hostport"
	"github.com/plasmactl/plasma-node/pxe/discovery"

	"github.com/plasmactl/plasma-node/pxe/apitype"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/tlscert"
)

// Defaults of [Options].
const (
	// DefaultTimeout bounds one request (not the event stream).
	DefaultTimeout = 30 * time.Second
	// maxReply bounds a reply body; maxErrorReply a refusal's.
	maxReply      = 16 << 20
	maxErrorReply = 64 << 10
	// attempts is how many times a retried request is tried.
	attempts = 5
	// firstBackoff doubles after each failed attempt, up to maxBackoff.
	firstBackoff = 200 * time.Millisecond
	maxBackoff   = 5 * time.Second
)

// WindowStatus is the provisioning window as the server reports it.
type WindowStatus = apitype.WindowStatus

// WindowOptions are a window's settings beside its TTL, such as Secure
// Boot. See [apitype.WindowOptions].
type WindowOptions = apitype.WindowOptions

// Options configure a [Client].
type Options struct {
	// URL is the server, such as https://provisioner.example:8091.
	URL string
	// Token is the bearer token (from the environment, never a flag).
	Token string
	// Fingerprint pins the server's certificate: its SHA-256 fingerprint
	// in the installer's format, as node-provisioner tls fingerprint
	// prints it. Empty trusts the system's certificate pool.
	Fingerprint string
	// Timeout bounds each request but the event stream. Default
	// [DefaultTimeout].
	Timeout time.Duration
	// Logger receives retries; nil discards them.
	Logger *slog.Logger
}

// Client speaks to one node-provisioner daemon. It is safe for
// concurrent use.
type Client struct {
	base    *url.URL
	token   string
	timeout time.Duration
	hc      *http.Client
	log     *slog.Logger
	// backoff is the first wait between attempts (tests shorten it).
	backoff time.Duration
}

// New returns a client for opts; it does no I/O.
func New(opts Options) (*Client, error) {
	u, err := url.Parse(strings.TrimSuffix(opts.URL, "/"))
	if err != nil || u.Host == "" || u.Scheme != "https" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("server URL %q: want https://HOST[:PORT]", opts.URL)
	}
	if err := hostport.CheckURLHost(u.Host); err != nil {
		return nil, fmt.Errorf("server URL %q: %w", opts.URL, err)
	}
	if strings.ContainsFunc(opts.Token, func(c rune) bool { return c <= ' ' || c > '~' }) {
		return nil, errors.New("the API token holds spaces or characters that are not printable ASCII")
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if opts.Fingerprint != "" {
		if tc, err = tlscert.PinnedTLSConfig(opts.Fingerprint); err != nil {
			return nil, err
		}
		verify := tc.VerifyPeerCertificate
		tc.VerifyPeerCertificate = func(raw [][]byte, chains [][]*x509.Certificate) error {
			if err := verify(raw, chains); err != nil {
				return fmt.Errorf("%w: %w", ErrCertificate, err)
			}
			return nil
		}
		tc.MinVersion = tls.VersionTLS12
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		TLSClientConfig:       tc,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: opts.Timeout,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   32,
		ForceAttemptHTTP2:     true,
	}
	hc := &http.Client{
		Transport: tr,
		// Never follow a redirect: the token stays with the server named.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &Client{base: u, token: opts.Token, timeout: opts.Timeout, hc: hc, log: log, backoff: firstBackoff}, nil
}

// request is one API call.
type request struct {
	method, path string
	body         any
	header       http.Header
	op           op
	// retry says the request may be sent again after a connection error.
	retry bool
}

// do sends req and decodes a 2xx reply into out (when not nil).
func (c *Client) do(ctx context.Context, req request, out any) error {
	var body []byte
	if req.body != nil {
		var err error
		if body, err = json.Marshal(req.body); err != nil {
			return err
		}
	}
	wait := c.backoff
	for attempt := 1; ; attempt++ {
		err := c.once(ctx, req, body, out)
		if err == nil || !req.retry || attempt >= attempts || !retryable(ctx, err) {
			return err
		}
		c.log.Warn("node-provisioner API: request failed; retrying", "method", req.method, "path", req.path, "attempt", attempt, "in", wait.String(), "err", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, maxBackoff)
	}
}

// retryable reports whether err is a failure of the connection (or a
// server that is restarting), not a refusal or the end of ctx.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, ErrCertificate) {
		return false
	}
	var ae *Error
	if errors.As(err, &ae) {
		if errors.Is(ae, apitype.ErrBMCFailed) {
			return false // the BMC's answer, retried by the server already
		}
		return ae.Status == http.StatusBadGateway || ae.Status == http.StatusServiceUnavailable || ae.Status == http.StatusGatewayTimeout
	}
	var ce *tls.CertificateVerificationError
	return !errors.As(err, &ce)
}

func (c *Client) newRequest(ctx context.Context, req request, body []byte) (*http.Request, error) {
	u := *c.base
	u.Path = c.base.Path + apitype.Prefix + req.path
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, u.String(), rd)
	if err != nil {
		return nil, err
	}
	for k, v := range req.header {
		hr.Header[k] = v
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	hr.Header.Set("Accept", "application/json")
	if c.token != "" {
		hr.Header.Set("Authorization", "Bearer "+c.token)
	}
	return hr, nil
}

func (c *Client) once(ctx context.Context, req request, body []byte, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	hr, err := c.newRequest(ctx, req, body)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(hr)
	if err != nil {
		return fmt.Errorf("node-provisioner API %s %s: %w", req.method, req.path, transportError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return refusal(resp, req.op)
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorReply))
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxReply+1))
	if err != nil {
		return fmt.Errorf("node-provisioner API %s %s: reading the reply: %w", req.method, req.path, err)
	}
	if len(data) > maxReply {
		return fmt.Errorf("node-provisioner API %s %s: reply over %d bytes", req.method, req.path, maxReply)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("node-provisioner API %s %s: malformed reply: %w", req.method, req.path, err)
	}
	return nil
}

// transportError is err of http.Client.Do without its *url.Error
// wrapping, matching [ErrCertificate] when the certificate was refused.
func transportError(err error) error {
	err = stripURL(err)
	var ce *tls.CertificateVerificationError
	if errors.As(err, &ce) && !errors.Is(err, ErrCertificate) {
		err = fmt.Errorf("%w: %w", ErrCertificate, err)
	}
	return err
}

// stripURL drops the *url.Error's wrapping (method and URL said already).
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// refusal reads a non-2xx reply as an [*Error].
func refusal(resp *http.Response, o op) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorReply))
	var body apitype.Error
	if json.Unmarshal(data, &body) != nil || body.Error == "" {
		body.Error = strings.TrimSpace(string(bytes.ToValidUTF8(data, nil)))
		if len(body.Error) > 200 {
			body.Error = body.Error[:200] + "…"
		}
	}
	return &Error{Status: resp.StatusCode, Message: body.Error, Field: body.Field, op: o}
}

// Health checks that the server answers; it needs no token.
func (c *Client) Health(ctx context.Context) error {
	var h apitype.Health
	if err := c.do(ctx, request{method: "GET", path: "/health", retry: true}, &h); err != nil {
		return err
	}
	if h.Status != "ok" {
		return fmt.Errorf("node-provisioner API: health %q", h.Status)
	}
	return nil
}

// Register writes a registration on the server, as node-provisioner
// register does there. It is retried on connection errors with one
// Idempotency-Key, so it is done once.
func (c *Client) Register(ctx context.Context, r registry.Registration, opts registry.RegisterOptions) (registry.RegisterResult, error) {
	return c.register(ctx, r, opts, "")
}

// RegisterWithBMCPassword is [Client.Register] of a registration with a
// BMC, sending its password, which the server keeps 0600 beside the node
// secrets and never returns.
func (c *Client) RegisterWithBMCPassword(ctx context.Context, r registry.Registration, opts registry.RegisterOptions, password string) (registry.RegisterResult, error) {
	if r.BMC == nil || password == "" {
		return registry.RegisterResult{}, fmt.Errorf("register %s: a BMC password is sent with a BMC", r.Name)
	}
	return c.register(ctx, r, opts, password)
}

func (c *Client) register(ctx context.Context, r registry.Registration, opts registry.RegisterOptions, bmcPassword string) (registry.RegisterResult, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return registry.RegisterResult{}, err
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(data, &body); err != nil {
		return registry.RegisterResult{}, err
	}
	if opts.Replace {
		body["replace"] = json.RawMessage("true")
	}
	if string(body["created"]) == `""` {
		delete(body, "created")
	}
	if bmcPassword != "" {
		pw, _ := json.Marshal(bmcPassword)
		body["bmc_password"] = pw
	}
	var key [16]byte
	rand.Read(key[:])
	var out apitype.RegisterResponse
	err = c.do(ctx, request{method: "POST", path: "/registrations", body: body, op: opRegister, retry: true,
		header: http.Header{apitype.IdempotencyHeader: {hex.EncodeToString(key[:])}}}, &out)
	if err != nil {
		return registry.RegisterResult{}, err
	}
	return out.Result(), nil
}

// Unregister removes the pending registration name; an unknown name is
// an error matching registry.ErrNotFound. It is not retried.
func (c *Client) Unregister(ctx context.Context, name string) error {
	return c.do(ctx, request{method: "DELETE", path: "/registrations/" + url.PathEscape(name), op: opUnregister}, nil)
}

// Nodes lists the registrations with their states, pending ones first.
func (c *Client) Nodes(ctx context.Context) ([]backend.Node, error) {
	var out []backend.Node
	err := c.do(ctx, request{method: "GET", path: "/registrations", retry: true}, &out)
	return out, err
}

// Node returns the registration name with its state; an unknown name is
// an error matching registry.ErrNotFound.
func (c *Client) Node(ctx context.Context, name string) (backend.Node, error) {
	var out backend.Node
	err := c.do(ctx, request{method: "GET", path: "/registrations/" + url.PathEscape(name), op: opNode, retry: true}, &out)
	return out, err
}

// Discovered returns the machines of the discovery inbox, oldest first.
func (c *Client) Discovered(ctx context.Context) ([]discovery.Record, error) {
	var out []discovery.Record
	err := c.do(ctx, request{method: "GET", path: "/discovered", retry: true}, &out)
	return out, err
}

// Window returns the provisioning window.
func (c *Client) Window(ctx context.Context) (WindowStatus, error) {
	var out WindowStatus
	err := c.do(ctx, request{method: "GET", path: "/window", retry: true}, &out)
	return out, err
}

// OpenWindow opens the provisioning window for ttl (admin). An open
// window is an error matching window.ErrOpen. It is not retried.
func (c *Client) OpenWindow(ctx context.Context, ttl time.Duration) (WindowStatus, error) {
	return c.OpenWindowWith(ctx, ttl, WindowOptions{})
}

// OpenWindowWith is [Client.OpenWindow] with the window's options, such
// as Secure Boot.
func (c *Client) OpenWindowWith(ctx context.Context, ttl time.Duration, opts WindowOptions) (WindowStatus, error) {
	var out WindowStatus
	err := c.do(ctx, request{method: "PUT", path: "/window", body: apitype.OpenWindowRequest{TTL: ttl.String(), SecureBoot: opts.SecureBoot, Discover: opts.Discover}, op: opOpenWindow}, &out)
	return out, err
}

// CloseWindow closes the provisioning window (admin); closing none is
// no error. It is not retried.
func (c *Client) CloseWindow(ctx context.Context) error {
	return c.do(ctx, request{method: "DELETE", path: "/window", op: opCloseWindow}, nil)
}

// TokenInfo is an API token as the server lists it (never the token).
type TokenInfo = apitype.TokenInfo

// Tokens lists the server's API tokens (admin).
func (c *Client) Tokens(ctx context.Context) ([]TokenInfo, error) {
	var out []TokenInfo
	err := c.do(ctx, request{method: "GET", path: "/tokens", retry: true}, &out)
	return out, err
}

// CreateToken makes an API token on the server (admin) and returns it;
// the server keeps only its hash. A ttl above zero makes one the server
// stops accepting that long after; zero, one that does not expire. It
// is not retried.
func (c *Client) CreateToken(ctx context.Context, name, scope string, ttl time.Duration) (string, error) {
	var out apitype.CreatedToken
	req := apitype.CreateTokenRequest{Name: name, Scope: scope}
	if ttl > 0 {
		req.TTL = ttl.String()
	}
	err := c.do(ctx, request{method: "POST", path: "/tokens", body: req, op: opToken}, &out)
	return out.Token, err
}

// RevokeToken revokes the server's API token name (admin); the server
// refuses it from its next request. It is not retried.
func (c *Client) RevokeToken(ctx context.Context, name string) error {
	return c.do(ctx, request{method: "DELETE", path: "/tokens/" + url.PathEscape(name), op: opToken}, nil)
}
