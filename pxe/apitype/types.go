package apitype

import (
	"errors"
	"time"

	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// Prefix is the path every endpoint is under.
const Prefix = "/api/v1"

// MaxBody is the largest request body taken: 64 KiB.
const MaxBody = 64 << 10

// IdempotencyHeader is the header that makes a POST safe to repeat.
const IdempotencyHeader = "Idempotency-Key"

// FromNow as Last-Event-ID asks the event stream for new events only.
const FromNow = "now"

// Error is the body of every refusal.
type Error struct {
	// Error says what is wrong, for people.
	Error string `json:"error"`
	// Field names the request field at fault, when one is.
	Field string `json:"field,omitempty"`
}

// Health is the body of GET /api/v1/health.
type Health struct {
	// Status is "ok".
	Status string `json:"status"`
	// Build identifies the server's binary.
	Build
}

// Build identifies a binary: the SDK's module version it was built from
// and, for a build from a checkout (make build), the commit and its time.
type Build struct {
	// Version is the module version: a release tag (v1.2.3), a Go
	// pseudo-version of the commit (v0.0.0-20261205230338-004a729271e1),
	// or "(devel)" for a build that recorded none (go run, tests, a
	// build with -buildvcs=false).
	Version string `json:"version"`
	// Commit is the full commit hash, when the build recorded it.
	Commit string `json:"commit,omitempty"`
	// Date is the commit's time (RFC 3339, UTC), when recorded.
	Date string `json:"date,omitempty"`
	// Modified reports a build from a checkout with uncommitted changes.
	Modified bool `json:"modified,omitempty"`
}

// RegisterResponse is the body of a created registration.
type RegisterResponse struct {
	// Registration is what was written.
	Registration registry.Registration `json:"registration"`
	// Previous is the pending registration of the same name it replaced.
	Previous *registry.Registration `json:"previous,omitempty"`
	// Moved are the pins taken from other registrations (replace).
	Moved []PinMove `json:"moved,omitempty"`
}

// PinMove is a [registry.PinMove] on the wire.
type PinMove struct {
	// Kind is mac, serial or uuid; Value the pin.
	Kind  string `json:"kind"`
	Value string `json:"value"`
	// From is the registration that held it.
	From string `json:"from"`
	// Removed says From pinned nothing else and was removed.
	Removed bool `json:"removed,omitempty"`
}

// Result returns the [registry.RegisterResult] r stands for.
func (r RegisterResponse) Result() registry.RegisterResult {
	res := registry.RegisterResult{Previous: r.Previous}
	for _, m := range r.Moved {
		res.Moved = append(res.Moved, registry.PinMove{Pin: registry.Pin{Kind: m.Kind, Value: m.Value}, From: m.From, Removed: m.Removed})
	}
	return res
}

// OpenWindowRequest is the body of PUT /api/v1/window.
type OpenWindowRequest struct {
	// TTL is how long the window stays open, such as "2h".
	TTL string `json:"ttl"`
	// SecureBoot offers every UEFI machine the Secure Boot chain the
	// booted release carries, instead of iPXE (serve --secure-boot).
	SecureBoot bool `json:"secure_boot,omitempty"`
	// Discover boots machines no registration knows into discovery,
	// keeping their reports in the inbox (serve --discover).
	Discover bool `json:"discover,omitempty"`
}

// WindowOptions are the settings of one window opened through the API,
// beside the daemon's own.
type WindowOptions struct {
	// SecureBoot: see [OpenWindowRequest.SecureBoot].
	SecureBoot bool
	// Discover: see [OpenWindowRequest.Discover].
	Discover bool
}

// WindowStatus is the provisioning window of the state folder, whoever
// runs it.
type WindowStatus struct {
	// Open says a window serves.
	Open bool `json:"open"`
	// Daemon says the daemon runs it (else another process, such as
	// node-provisioner serve).
	Daemon bool `json:"daemon,omitempty"`
	// PID is the serving process.
	PID int `json:"pid,omitempty"`
	// Unit is the transient systemd unit the window runs as, if any.
	Unit string `json:"unit,omitempty"`
	// Started and Deadline bound the window; a zero Deadline means no TTL.
	Started  time.Time `json:"started,omitzero"`
	Deadline time.Time `json:"deadline,omitzero"`
	// HTTP is the window's listen address, URL where installers reach
	// the answer endpoint.
	HTTP string `json:"http,omitempty"`
	URL  string `json:"url,omitempty"`
	// DHCPInterface and TFTP are the network-boot side, when it runs.
	DHCPInterface string `json:"dhcp_interface,omitempty"`
	TFTP          string `json:"tftp,omitempty"`
	// CertFingerprint is the window's TLS certificate's fingerprint.
	CertFingerprint string `json:"cert_fingerprint,omitempty"`
	// SecureBoot says the window offers every UEFI x86-64 machine the
	// Secure Boot chain instead of iPXE.
	SecureBoot bool `json:"secure_boot,omitempty"`
	// Warnings are what the window warned of as it started (no boot
	// assets staged, no SSH public key, answers served without an answer
	// token…), each a message in the window's words with its details;
	// given by a daemon for the window it runs.
	Warnings []string `json:"warnings,omitempty"`
	// Discover says the window boots unregistered machines into
	// discovery.
	Discover bool `json:"discover,omitempty"`
	// OpenedBy names the provisioner host that opened the site's window
	// (a daemon's).
	OpenedBy string `json:"opened_by,omitempty"`
	// Hosts are the provisioner hosts following the site's window, as
	// they last said (a daemon's, while the window is open).
	Hosts []window.Host `json:"hosts,omitempty"`
}

// Left returns the time left at now, 0 when closed or without a TTL.
func (w WindowStatus) Left(now time.Time) time.Duration {
	if !w.Open || w.Deadline.IsZero() || !now.Before(w.Deadline) {
		return 0
	}
	return w.Deadline.Sub(now).Round(time.Second)
}

// Errors of the power and boot endpoints, which a server's BMC driver
// wraps and a client's refusals match.
var (
	// ErrPowerRefused: the action is refused in the machine's state (no
	// BMC, window closed, registration not pending): 409.
	ErrPowerRefused = errors.New("refused in the machine's state")
	// ErrBMCFailed: the BMC is unreachable, refused the credentials or
	// reported an error: 502, with the BMC's words.
	ErrBMCFailed = errors.New("the BMC failed")
)

// PowerRequest is the body of POST /registrations/{name}/power.
type PowerRequest struct {
	// Action is status, on, off or cycle.
	Action string `json:"action"`
}

// PowerReply is the power state after a power request.
type PowerReply struct {
	// Power is "on" or "off".
	Power string `json:"power"`
}

// BootReply says what POST /registrations/{name}/boot did.
type BootReply struct {
	// Protocol is the BMC's: ipmi or redfish.
	Protocol string `json:"protocol"`
	// Mode is the one-time boot's firmware mode: uefi or legacy.
	Mode string `json:"mode"`
	// Was is the power state before; Cycled says the machine was on and
	// was power-cycled.
	Was    string `json:"was"`
	Cycled bool   `json:"cycled"`
	// Device is what the machine boots once: "pxe", or "cd" (the BMC's
	// virtual CD holding the installer's medium, for a virtual-media
	// registration); "" (an older daemon) is "pxe".
	Device string `json:"device,omitempty"`
}

// Next is what the machine boots once, in words: "PXE" or "the virtual
// CD".
func (b BootReply) Next() string {
	if b.Device == "cd" {
		return "the virtual CD"
	}
	return "PXE"
}

// TokenInfo is a token as GET /api/v1/tokens lists it: never the token.
type TokenInfo struct {
	Name     string    `json:"name"`
	Scope    string    `json:"scope"`
	Created  time.Time `json:"created"`
	LastUsed time.Time `json:"last_used,omitzero"`
	// Expires is when the token stops being accepted; absent for never.
	Expires time.Time `json:"expires,omitzero"`
}

// CreateTokenRequest is the body of POST /api/v1/tokens.
type CreateTokenRequest struct {
	Name  string `json:"name"`
	Scope string `json:"scope"`
	// TTL, such as "720h", makes a token that expires that long after it
	// is made; empty for one that does not expire.
	TTL string `json:"ttl,omitempty"`
}

// CreatedToken is the reply of POST /api/v1/tokens: the token, shown
// this once.
type CreatedToken struct {
	Name  string `json:"name"`
	Scope string `json:"scope"`
	Token string `json:"token"`
	// Expires is when the token stops being accepted; absent for never.
	Expires time.Time `json:"expires,omitzero"`
}

// ReinstallRequest is the optional body of POST
// /api/v1/registrations/{name}/reinstall; no body is the zero value.
type ReinstallRequest struct {
	// WipeData has the install create the node's data pools anew over
	// what their disks hold. False (the default) keeps them: the
	// first-boot script imports the pools it finds on their disks.
	WipeData bool `json:"wipe_data,omitempty"`
}

// ReinstallReply answers POST /api/v1/registrations/{name}/reinstall: the
// registration is pending again, and Boot says how its BMC booted it
// into the installer (nil for a registration without a BMC, whose
// machine the operator boots).
type ReinstallReply struct {
	// Name is the re-armed registration's.
	Name string `json:"name"`
	// Boot is the BMC's boot, when the registration has a BMC.
	Boot *BootReply `json:"boot"`
}

// SiteSecrets is GET /api/v1/secrets's reply: the site secrets' names,
// sorted; never a value.
type SiteSecrets struct {
	Names []string `json:"names"`
}

// SiteSecret is PUT /api/v1/secrets/{name}'s body: the secret's value,
// one line. It is write-only: no reply holds it.
type SiteSecret struct {
	Value string `json:"value"`
}
