package bmc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Power is a machine's power state as its BMC reports it.
type Power string

// Power states.
const (
	PowerOn  Power = "on"
	PowerOff Power = "off"
	// PowerTransition is Redfish's PoweringOn, PoweringOff or Paused.
	PowerTransition Power = "changing"
)

// BootMode is the firmware mode of a one-time boot override.
type BootMode string

// Boot modes.
const (
	BootUEFI   BootMode = "uefi"
	BootLegacy BootMode = "legacy"
)

// ParseBootMode reads "uefi" or "legacy" (any case); "" is UEFI.
func ParseBootMode(s string) (BootMode, error) {
	switch strings.ToLower(s) {
	case "", "uefi", "efi":
		return BootUEFI, nil
	case "legacy", "bios":
		return BootLegacy, nil
	}
	return "", fmt.Errorf("%w: boot mode %q (want uefi or legacy)", ErrInvalidEndpoint, s)
}

// Controller is one machine's BMC. Every method is context-first and
// returns errors wrapping [ErrUnreachable], [ErrAuthRefused] or [ErrBMC].
type Controller interface {
	// Protocol names the driver: "ipmi" or "redfish".
	Protocol() string
	// PowerStatus reports the power state.
	PowerStatus(ctx context.Context) (Power, error)
	// PowerOn powers the machine on; a machine already on stays on.
	PowerOn(ctx context.Context) error
	// PowerOff cuts the power at once (no guest shutdown).
	PowerOff(ctx context.Context) error
	// PowerCycle powers the machine off and on again.
	PowerCycle(ctx context.Context) error
	// Reset restarts the machine without a power cycle.
	Reset(ctx context.Context) error
	// SetNextBootPXE makes the next boot, and only that one, a network
	// boot in the given firmware mode.
	SetNextBootPXE(ctx context.Context, mode BootMode) error
	// Close ends the session, if the driver keeps one.
	Close(ctx context.Context) error
}

// Errors a [Controller] returns, wrapped with what was asked.
var (
	// ErrUnreachable: the BMC did not answer (no route, refused
	// connection, timeout, TLS failure or pin mismatch).
	ErrUnreachable = errors.New("BMC unreachable")
	// ErrAuthRefused: the BMC refused the user or password, or the
	// session's privilege is too low for the command.
	ErrAuthRefused = errors.New("BMC refused the credentials")
	// ErrBMC: the BMC answered with an error; [*Error] keeps its words.
	ErrBMC = errors.New("BMC error")
	// ErrInvalidEndpoint: an endpoint, cipher suite, privilege or boot
	// mode that is not valid.
	ErrInvalidEndpoint = errors.New("invalid BMC endpoint")
)

// Error is a failure of one BMC call.
type Error struct {
	// Op is what was asked, such as "power on".
	Op string
	// Kind is [ErrUnreachable], [ErrAuthRefused] or [ErrBMC].
	Kind error
	// Said is the BMC's own words (an IPMI completion code and its
	// meaning, a Redfish message) or the network error.
	Said string
	// Transient says a retry may succeed.
	Transient bool
}

// Error says what was asked, the kind of failure and the BMC's words.
func (e *Error) Error() string {
	if e.Said == "" {
		return e.Op + ": " + e.Kind.Error()
	}
	return e.Op + ": " + e.Kind.Error() + ": " + e.Said
}

// Unwrap returns Kind.
func (e *Error) Unwrap() error { return e.Kind }

// Endpoint is where a BMC listens and how to talk to it.
type Endpoint struct {
	// Protocol is "ipmi" or "redfish".
	Protocol string
	// Host is the BMC's host name or address.
	Host string
	// Port is the port; 0 is the protocol's (623/udp, 443/tcp).
	Port int
	// SystemID is the Redfish ComputerSystem's id (the last element of
	// its @odata.id); empty: the only member of the Systems collection.
	SystemID string
}

// String returns the endpoint in the form [Parse] reads.
func (e Endpoint) String() string {
	host := e.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	s := e.Protocol + "://" + host
	if e.Port != 0 {
		s += ":" + strconv.Itoa(e.Port)
	}
	if e.SystemID != "" {
		s += "/" + e.SystemID
	}
	return s
}

// Parse reads ipmi://HOST[:PORT] or redfish://HOST[:PORT][/SYSTEM-ID].
// Errors wrap [ErrInvalidEndpoint].
func Parse(s string) (Endpoint, error) {
	const want = "want ipmi://HOST[:PORT] or redfish://HOST[:PORT][/SYSTEM-ID]"
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return Endpoint{}, fmt.Errorf("%w %q: %s", ErrInvalidEndpoint, s, want)
	}
	if u.User != nil {
		return Endpoint{}, fmt.Errorf("%w %q: no user or password in the URL; %s", ErrInvalidEndpoint, redactURL(u), want)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return Endpoint{}, fmt.Errorf("%w %q: no query or fragment; %s", ErrInvalidEndpoint, s, want)
	}
	e := Endpoint{Protocol: u.Scheme, Host: u.Hostname()}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Endpoint{}, fmt.Errorf("%w %q: port %q is not 1 to 65535", ErrInvalidEndpoint, s, p)
		}
		e.Port = n
	}
	p, ok := protocolOf(e.Protocol)
	if !ok {
		return Endpoint{}, fmt.Errorf("%w %q: scheme %q; %s", ErrInvalidEndpoint, s, e.Protocol, want)
	}
	if e.SystemID, err = p.systemID(strings.Trim(u.Path, "/")); err != nil {
		return Endpoint{}, fmt.Errorf("%w %q: %v; %s", ErrInvalidEndpoint, s, err, want)
	}
	return e, nil
}

func redactURL(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}

// Credentials log in to a BMC. The password is never logged or put in an
// error.
type Credentials struct {
	// User is the BMC account.
	User string
	// Password is its password.
	Password string
}

// Options tune a driver. The zero value is the safe default.
type Options struct {
	// CipherSuite is the IPMI RMCP+ cipher suite; 0 means 3
	// (HMAC-SHA1, HMAC-SHA1-96, AES-CBC-128). Suite 0 (no
	// authentication) is refused. Valid: 1 to 3 and 6 to 8, 11, 12, 15
	// to 17.
	CipherSuite int
	// Privilege is the IPMI session privilege: "operator" (the default,
	// enough for chassis control) or "administrator".
	Privilege string
	// Fingerprint pins a Redfish BMC's certificate by its SHA-256
	// fingerprint (hex pairs, colons optional). Empty: the system's
	// roots verify it.
	Fingerprint string
	// Session makes the Redfish driver log in with a session
	// (X-Auth-Token) rather than HTTP Basic on each request.
	Session bool
	// Timeout bounds one attempt of one call (connect or request); 0
	// means 3 s.
	Timeout time.Duration
	// Attempts is how often a transient failure is tried; 0 means 3.
	Attempts int
	// Backoff is the first wait between attempts, doubled each time; 0
	// means 300 ms.
	Backoff time.Duration
	// Logger gets debug lines (never a password); nil discards them.
	Logger *slog.Logger
}

// WithDefaults returns o with its zero fields set to the defaults a
// driver uses: Timeout 3 s, Attempts 3, Backoff 300 ms, a discarding
// Logger.
func (o Options) WithDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = 3 * time.Second
	}
	if o.Attempts <= 0 {
		o.Attempts = 3
	}
	if o.Backoff <= 0 {
		o.Backoff = 300 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// HostPort joins e's host with its port, or def when it has none.
func (e Endpoint) HostPort(def int) string {
	p := e.Port
	if p == 0 {
		p = def
	}
	return net.JoinHostPort(e.Host, strconv.Itoa(p))
}

// Retry runs f up to o.Attempts times while it fails with a transient
// [*Error], waiting o.Backoff, then twice that, between attempts; drivers
// wrap each call in it.
func Retry(ctx context.Context, o Options, op string, f func(context.Context) error) error {
	wait := o.Backoff
	var err error
	for i := 0; i < o.Attempts; i++ {
		if err = f(ctx); err == nil {
			return nil
		}
		var be *Error
		if !errors.As(err, &be) || !be.Transient || i == o.Attempts-1 {
			return err
		}
		o.Logger.Debug("BMC call failed, retrying", "op", op, "attempt", i+1, "wait", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: %w (after %v)", op, ctx.Err(), err)
		case <-t.C:
		}
		wait *= 2
	}
	return err
}
