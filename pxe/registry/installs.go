package registry

import (
	"context"
	"errors"
	"time"

	"github.com/plasmactl/plasma-node/answer"
)

// ErrNoInstall is wrapped by [Installs.Get]'s error for a node whose
// installer has not reported.
var ErrNoInstall = errors.New("no install report")

// Install is what a node's installer reported when it finished (the
// post-installation webhook), kept with its consumed registration.
type Install struct {
	// Name is the registration's name.
	Name string `json:"name"`
	// Reported is when the webhook came.
	Reported time.Time `json:"reported"`
	// ClientIP is the address the webhook came from.
	ClientIP string `json:"client_ip,omitempty"`
	// Report is what the installer said of the installed system.
	Report answer.InstallReport `json:"report"`
}

// Installs is the store of install reports, one per registration name.
// Package pxe/store/folder is the state folder's implementation;
// another implements the same semantics, which the conformance suite in
// package registry/installtest checks:
//
//   - Put keeps in, replacing the report of the same name (a reinstall);
//   - Get returns what the last Put of that name kept, or an error
//     wrapping [ErrNoInstall];
//   - List returns every kept report, sorted by name;
//   - a name [ValidateName] refuses is refused by Put.
//
// Methods are safe for concurrent use.
type Installs interface {
	// Put keeps in, replacing the report of its name.
	Put(ctx context.Context, in Install) error
	// Get returns the report of name.
	Get(ctx context.Context, name string) (Install, error)
	// List returns the reports sorted by name.
	List(ctx context.Context) ([]Install, error)
}
