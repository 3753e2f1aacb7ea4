package providers

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"

	"github.com/plasmactl/plasma-node/tofu"
)

// ErrDirect: the provider makes its servers without OpenTofu (a
// [Direct] provider), so it has no configuration to plan.
var ErrDirect = errors.New("provider is not OpenTofu-backed")

// Direct is a [Provider] whose servers are not made through OpenTofu but
// by the provider itself: bare metal handed to an installer (pxe). The
// plasmanode operations test for it and call Plan and Remove instead of
// configuring, planning and applying with tofu; its Configure returns an
// error wrapping [ErrDirect]. Node files stay the source of truth: the
// servers to adopt come in [Input.Existing], as for the cloud providers.
type Direct interface {
	Provider

	// Plan lays out the servers of in.Input as [Slots] does and compares
	// them with what the provider already holds in in.Dir. Nothing is
	// written: [DirectPlan.Apply] does that. Servers that the pools no
	// longer have room for are planned as deletes, which the caller's
	// gate refuses as it refuses a tofu plan that deletes.
	//
	// Errors: [ErrInvalidInput], and the provider's own for bad input
	// (a malformed hardware list, too few machines).
	Plan(ctx context.Context, in DirectInput) (DirectPlan, error)

	// Remove withdraws the servers of in.Existing from the provider (pxe:
	// their pending registrations; a consumed one stays, the record of
	// an install) and returns their hostnames.
	Remove(ctx context.Context, in DirectInput) ([]string, error)

	// States returns the install state of each server the provider holds
	// at a location, by hostname (pxe: pending, consumed, installed). A
	// folder that does not exist is [ErrNoRecords]: nothing says where
	// the states would be.
	States(ctx context.Context, at Location) (map[string]string, error)
}

// ErrNoRecords: a [Direct] provider's location does not exist, so it
// cannot say which servers it holds (pxe: no node-provisioner state
// folder on this host and no API configured).
var ErrNoRecords = errors.New("no records at the provider's location")

// Location is where a [Direct] provider keeps its records: a folder on
// this host, or the provider's service reached over its API.
type Location struct {
	// Dir is the folder (pxe: node-provisioner's state folder). Used when
	// Remote is nil.
	Dir string
	// SecretsDir is the provider's folder of secrets beside Dir (pxe:
	// node-provisioner's, where BMC passwords are kept); empty: the
	// provider's default. Used when Remote is nil.
	SecretsDir string
	// Remote, when set, is the service that holds the records.
	Remote *Remote
}

// String names the location: the API's URL or the folder.
func (l Location) String() string {
	if l.Remote != nil {
		return l.Remote.URL
	}
	return l.Dir
}

// Remote is a provider's service reached over its API (pxe:
// node-provisioner's management API).
type Remote struct {
	// URL is the API's base URL (https://host:port).
	URL string
	// Fingerprint pins the server's certificate (SHA-256, as
	// node-provisioner's tls fingerprint prints it); empty trusts the
	// system's certificate pool.
	Fingerprint string
	// Token is the bearer token (a credential: from the environment,
	// never printed or written).
	Token string `json:"-"`
}

// DirectInput is what a [Direct] provider plans from.
type DirectInput struct {
	Input
	// Location is where the provider keeps its records
	// (node-provisioner's state folder or API for pxe). Required.
	Location
	// HardwareFile is a provider-specific list of the machines new
	// servers are taken from (pxe: see its ParseHardware). Optional.
	HardwareFile string
	// Logger receives what the provider does; nil discards it.
	Logger *slog.Logger
	// Allocate, when set, gives a new server its private address before
	// it is made: the next free address of the platform's ip pool named
	// ipPool ("" for networking.private_network), taken for this run. A
	// provider that hands the address to the machine itself (pxe's static
	// addressing) calls it and returns the address as the server's
	// PrivateIP. Nil: addresses are allocated when node files are written.
	Allocate func(ipPool string) (netip.Addr, error)
}

// DirectPlan is a [Direct] provider's plan: its changes, classified as a
// tofu plan is, and the step that makes them.
type DirectPlan interface {
	// Summary is the plan, classified: Creates for new servers, Deletes
	// for servers beyond a pool's count.
	Summary() tofu.Summary
	// Apply makes the planned changes (never the deletes) and returns
	// every server of the layout, sorted by hostname.
	Apply(ctx context.Context) ([]Server, error)
}

// Installed is what a [Direct] provider's server reported of itself once
// installed (pxe: the installer's webhook).
type Installed struct {
	// FQDN is the installed system's name; "" when it reported none.
	FQDN string
	// Address is its management address with its prefix; zero when it
	// reported none.
	Address netip.Prefix
	// HostKeys are its SSH host public keys, "TYPE BASE64", checked.
	HostKeys []string
	// NICNames are the pinned names of its interfaces by MAC; nil when
	// none was pinned.
	NICNames map[string]string
	// BootDisks are the devices the system was installed on
	// ("/dev/nvme0n1"); nil when it reported none.
	BootDisks []string
}

// InstallReporter is a [Direct] provider whose installed servers report
// their address and SSH host keys.
type InstallReporter interface {
	// Installed returns what each installed server at a location
	// reported, by hostname; a server that has not reported is left
	// out. A folder that does not exist is [ErrNoRecords].
	Installed(ctx context.Context, at Location) (map[string]Installed, error)
}
