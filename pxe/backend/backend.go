package backend

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/events"
)

// ErrNoAnswer is returned (wrapped) by [Backend.Answer] for a machine it
// does not answer: the installer gets 404 and the error's message, which
// it shows on its console. It is also what [OneShot] methods return for
// an unknown or spent token.
var ErrNoAnswer = errors.New("no answer for this machine")

// Refusal is an error of [Backend.Answer] that refuses a request with a
// status other than 404, such as 400 for a bad parameter or 409 for a
// machine that cannot be answered yet. Its Reason is shown to the
// installer; it must hold no secret.
type Refusal struct {
	// Status is the HTTP status of the reply, 400 to 499.
	Status int
	// Reason says why, in a sentence.
	Reason string
	// Node is the registration concerned, if one was matched.
	Node string
}

// Error returns the Reason, as the installer is shown it.
func (r *Refusal) Error() string { return r.Reason }

// Is makes a refusal with status 404 match [ErrNoAnswer].
func (r *Refusal) Is(target error) bool { return target == ErrNoAnswer && r.Status == 404 }

// Backend answers a provisioning window's questions. Its methods are
// called concurrently, from the window's DHCP, TFTP and HTTP servers.
type Backend interface {
	// Allow reports whether the machine with this hardware address may be
	// offered a boot file by proxy-DHCP. It is called for every DHCP
	// packet, so it must be cheap (cache what it reads). A machine it
	// does not allow gets no offer and boots as if no window were open.
	Allow(mac net.HardwareAddr) bool
	// Boot decides what the machine with this MAC (lower-case,
	// colon-separated) boots once iPXE asks for its script: the installer
	// (Boot.Node set) or its next boot device. An error is a failure of
	// the backend, not a refusal: the script request gets 500.
	Boot(ctx context.Context, mac string) (Boot, error)
	// Answer decides the answer of one installer request, and changes
	// nothing: the window takes the rest as steps of its own. It returns
	// an error wrapping [ErrNoAnswer] or a [*Refusal] to refuse the
	// machine; any other error is logged and the installer gets 500
	// without it. For each answer returned, the window
	//
	//  1. renders it for the installer's version, once;
	//  2. claims it ([Answer.Claim]), the point of no return of a machine
	//     answered only once, only if the render succeeded;
	//  3. writes it;
	//  4. reports it delivered or not ([Answer.Delivered]), whatever
	//     happened in 1 to 3.
	Answer(ctx context.Context, req AnswerRequest) (*Answer, error)
}

// SecureBooter is a [Backend] that knows which machines boot the window's
// Secure Boot chain instead of iPXE when the window does not offer it to
// every machine. The window asks it on the proxy-DHCP offer path, for
// UEFI x86-64 clients only, so it must be cheap and must not allocate.
type SecureBooter interface {
	SecureBoot(mac net.HardwareAddr) bool
}

// Boot is the decision of [Backend.Boot].
type Boot struct {
	// Node names the node the machine installs as; empty means the
	// machine exits to its next boot device.
	Node string
	// Reason says why, for the log, the timeline and the exit script.
	Reason string
	// AskDisk makes the installer prompt on the console for the boot
	// disk (the release must be prepared with the prompt patched in).
	AskDisk bool
	// KernelArgs are words appended to the installer kernel's command
	// line for this machine, each one word of printable ASCII.
	KernelArgs []string
	// Stranger says no registration, pending or installed, knows the
	// machine: a discovery window boots it into discovery instead of
	// letting it exit. Never set with Node.
	Stranger bool
}

// AnswerRequest is an installer's request for its answer.
type AnswerRequest struct {
	// Info is the system information the installer posted.
	Info *answer.SystemInfo
	// Version is the installer's version (from Info, else
	// [answer.DefaultVersion]); the window has checked it is supported.
	Version answer.Version
	// ClientIP is the address the request came from.
	ClientIP string
	// BaseURL is the URL the installer reaches the window at, such as
	// "https://10.0.0.2:8090", for first-boot and webhook URLs.
	BaseURL string
	// CertFingerprint is the fingerprint of the window's TLS certificate
	// when the request came over HTTPS, else empty: an answer that points
	// the installer back at the window pins it.
	CertFingerprint string
	// CertPin is the window's public key pin when the request came over
	// HTTPS, else empty: the first-boot script posts its report to the
	// window only through it (curl --pinnedpubkey).
	CertPin string
	// BootDisk is the request's bootdisk parameter, empty when it has
	// none: the disk an operator chose at the installer's console.
	BootDisk string
}

// Answer is the result of [Backend.Answer].
type Answer struct {
	// Node names the node answered.
	Node string
	// Answer is what the installer gets, rendered for its version.
	Answer *answer.Answer
	// Header is a comment put above the rendered TOML, one or more lines
	// each starting with "#"; empty for none.
	Header string
	// Detail says how the machine was matched, for the event log.
	Detail string
	// Claim, if set, makes the answer this machine's before the window
	// writes it: a backend that answers a machine once consumes its
	// registration and keeps what the answer holds (a password) here.
	// The window calls it once, after the answer rendered and before
	// any byte of it is written; an error refuses the request as
	// Answer's would ([ErrNoAnswer], [*Refusal], else 500), and nothing
	// is written. Nil: nothing to claim.
	Claim func(ctx context.Context) error
	// Delivered, if set, is called once after Answer returned: with nil
	// when the reply was written, else with the error that kept it from
	// the installer (the render's, the claim's or the write's).
	Delivered func(err error)
}

// Event is one thing that happened at the window's answer side: a request
// and what came of it. It is [events.Event]; the kinds are declared in
// package events.
type Event = events.Event

// Recorder is a [Backend] that keeps what happened: the window reports
// every answer-side request to Record, and reads History once when it
// opens, to show earlier windows' events on its page.
type Recorder interface {
	// Record keeps e. An error is logged; the request is not failed.
	Record(ctx context.Context, e Event) error
	// History returns the events kept so far, oldest first.
	History(ctx context.Context) ([]Event, error)
}

// States of a [Node].
const (
	// StatePending: waiting for its machine.
	StatePending = "pending"
	// StateConsumed: its answer was served.
	StateConsumed = "consumed"
	// StateUndelivered: its answer was taken but the window did not see
	// it delivered (the connection died, or the window did); it can be
	// re-armed.
	StateUndelivered = "undelivered"
	// StateInstalled: its installer reported success.
	StateInstalled = "installed"
	// StateBroken: its record cannot be read (Problem says why); it
	// answers no machine and blocks matching by elimination.
	StateBroken = "broken"
)

// Node is one expected machine as the status page and node-provisioner's
// list show it. It holds no secret.
type Node struct {
	// Name is the node's hostname, as registered.
	Name string `json:"name"`
	// State is StatePending, StateConsumed or StateInstalled.
	State string `json:"state"`
	// MACs are the hardware addresses the node may boot from.
	MACs []string `json:"macs"`
	// BootDisk is the disk the system goes on, as a registration writes
	// it ("ask", "any", a kernel name or a serial).
	BootDisk string `json:"boot_disk"`
	// Pools are the node's data pools, as NAME=LAYOUT:DISK[,DISK...].
	Pools []string `json:"pools"`
	// Serial and UUID, when set, pin the node's DMI system serial and
	// UUID.
	Serial string `json:"serial,omitempty"`
	UUID   string `json:"uuid,omitempty"`
	// StaticAddress is the address with its prefix ("10.20.0.11/24")
	// the node's answer gives it (from-answer); "" when its address comes
	// from the site's DHCP server.
	StaticAddress string `json:"static_address,omitempty"`
	// BootMethod is its registration's boot method ("network" or
	// "virtual-media"), "" when it names none and the site's applies;
	// MediaAnswer is how a virtual-media installer gets its answer
	// ("iso" or "http"), "" for the site's.
	BootMethod  string `json:"boot_method,omitempty"`
	MediaAnswer string `json:"media_answer,omitempty"`
	// Created is when the node was registered.
	Created time.Time `json:"created"`
	// ConsumedAt and InstallIP are set once an answer was served.
	ConsumedAt *time.Time `json:"consumed_at,omitempty"`
	InstallIP  string     `json:"install_ip,omitempty"`
	// InstalledAt is set once the installer reported success.
	InstalledAt *time.Time `json:"installed_at,omitempty"`
	// BootMode ("efi" or "bios") and SecureBoot are what the installer's
	// webhook said of the installed machine's boot; empty and nil when
	// it did not say.
	BootMode   string `json:"boot_mode,omitempty"`
	SecureBoot *bool  `json:"secure_boot,omitempty"`
	// Address is the installed system's management address with its
	// prefix ("192.0.2.41/24"), as its webhook reported it; "" when no
	// report is kept or it named none.
	Address string `json:"address,omitempty"`
	// HostKeyFingerprints are the SHA-256 fingerprints of the reported
	// SSH host keys, as ssh-keygen -l prints them ("SHA256:…").
	HostKeyFingerprints []string `json:"host_key_fingerprints,omitempty"`
	// Install is what the installer's webhook reported of the installed
	// system; nil until it reported, or when no report is kept.
	Install *answer.InstallReport `json:"install,omitempty"`
	// Problem says what is wrong with a broken node's record, with its
	// file and line, or which pins a pending node shares with another
	// (the machine is refused until one is removed).
	Problem string `json:"problem,omitempty"`
}

// Inventory is a [Backend] that lists its nodes, for the window's status
// page and GET /status.
type Inventory interface {
	// Nodes lists the nodes, pending ones first, each sorted by name.
	Nodes(ctx context.Context) ([]Node, error)
}

// OneShot is a [Backend] whose answers point the installer back at the
// window: a first-boot script to fetch (GET /first-boot/{token}) and a
// webhook to post when the installation is done (POST /webhook/{token}).
// Both return an error wrapping [ErrNoAnswer] for an unknown or spent
// token.
type OneShot interface {
	// FirstBoot returns the first-boot script of token, once.
	FirstBoot(ctx context.Context, token, clientIP string) ([]byte, error)
	// Installed takes an installer's report of success for token, once,
	// with what it tells of the installed system (report, parsed and
	// checked), and returns the node it names. A report is kept only
	// with the token it came with: a spent token changes nothing. A
	// report carrying a Token (9.2+: the answer's webhook auth-token sent
	// back) other than the one its node's answer had is refused the same
	// way, with [ErrNoAnswer], and spends nothing.
	Installed(ctx context.Context, token, clientIP string, report *answer.InstallReport) (node string, err error)
}

// FirstBootReporter is a [OneShot] backend whose first-boot scripts
// report back (POST /first-boot-report/{token}) what they did with the
// node's data pools. FirstBootReport takes the body, at most
// MaxFirstBootReport bytes, once per token, and returns the node it
// names and what to put on its timeline. It returns an error wrapping
// [ErrNoAnswer] for an unknown or spent token, and a [*Refusal] of 400
// for a body it does not read, which spends nothing.
type FirstBootReporter interface {
	FirstBootReport(ctx context.Context, token, clientIP string, body []byte) (node, detail string, err error)
}

// MediaAnswerer is a [Backend] that answers a named node before its
// installer asks: the answer goes on the node's virtual medium, which
// its BMC fetches from the window (boot method virtual-media). The
// window renders the answer for the release it serves and claims it
// ([Answer.Claim]) on the medium's first fetch, with req.ClientIP the
// fetcher's address; it never reports it delivered, as it cannot see the
// installer read it. A nil Answer and nil error say the node's medium
// holds no answer (its installer fetches it from the window). An error
// wrapping [ErrNoAnswer] (or a [*Refusal]) refuses the fetch.
type MediaAnswerer interface {
	MediaAnswer(ctx context.Context, node string, req AnswerRequest) (*Answer, error)
}

// Starter is a [Backend] with work to do when a window opens on it,
// before anything is served: a backend that keeps answers' files in a
// folder cleans up after a window that was killed there. The window
// calls Start once, holding its state folder's lock, so that no other
// window on the folder runs meanwhile; an error keeps the window shut.
type Starter interface {
	Start(ctx context.Context) error
}

// ConfigError is a setting a window, or the backend it would answer
// from, cannot run with. Field names the setting (a window
// Config field's name, or "Site", "Registrations", "Discover" for a
// backend's), Value the value refused, Reason why, and Err, when set,
// the error behind it.
type ConfigError struct {
	Field, Value, Reason string
	Err                  error
}

// Error names the field, the value refused and why.
func (e *ConfigError) Error() string {
	msg := e.Field
	if e.Value != "" {
		msg += " " + fmt.Sprintf("%q", e.Value)
	}
	msg += ": " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the error behind the refusal, if any.
func (e *ConfigError) Unwrap() error { return e.Err }
