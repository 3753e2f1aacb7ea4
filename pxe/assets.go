package pxe

import (
	"context"
	"crypto/tls"

	"github.com/plasmactl/plasma-node/pxe/bootassets"
	"github.com/plasmactl/plasma-node/pxe/sbchain"
	"github.com/plasmactl/plasma-node/pxe/tlscert"
)

// The boot assets and the TLS certificate, as node-provisioner uses them:
// forwarded here so that a program running a window needs this package
// alone. Package bootassets and package tlscert have the rest.

// ErrNotAutoInstallISO is wrapped by the errors of [Prepare] for a file
// that is not an auto-install capable Proxmox ISO. See
// [bootassets.ErrNotAutoInstallISO].
var ErrNotAutoInstallISO = bootassets.ErrNotAutoInstallISO

// ErrNotStatic is wrapped by the error of [Prepare] for a discovery
// agent that is not a static executable. It is
// [bootassets.ErrNotStatic].
var ErrNotStatic = bootassets.ErrNotStatic

// ChainPieceError is the error of [Prepare] for a Secure Boot chain that
// cannot boot, naming the piece (shim, grub, kernel). See
// [sbchain.PieceError].
type ChainPieceError = sbchain.PieceError

// PrepareOptions configures [Prepare]. See [bootassets.PrepareOptions].
type PrepareOptions = bootassets.PrepareOptions

// PrepareProgress is one report of [Prepare] on its way, as the Progress
// func of [PrepareOptions] receives it. See [bootassets.Progress].
type PrepareProgress = bootassets.Progress

// Kinds of [PrepareProgress]. See [bootassets.ProgressKind].
const (
	// PrepareNote is a line for the operator. See [bootassets.ProgressNote].
	PrepareNote = bootassets.ProgressNote
	// PrepareWarning is a warning. See [bootassets.ProgressWarning].
	PrepareWarning = bootassets.ProgressWarning
	// PrepareCopy counts the bytes of a copying step. See
	// [bootassets.ProgressCopy].
	PrepareCopy = bootassets.ProgressCopy
)

// Release describes one prepared release folder. See
// [bootassets.Release].
type Release = bootassets.Release

// Prepare stages a Proxmox installer ISO as boot assets under
// <StateDir>/assets/<release>/, without root and without mounting
// anything. See [bootassets.Prepare].
func Prepare(ctx context.Context, opts PrepareOptions) (*Release, error) {
	return bootassets.Prepare(ctx, opts)
}

// FileFingerprint returns the fingerprint of a PEM certificate file, as
// clients pin it. See [tlscert.FileFingerprint].
func FileFingerprint(path string) (string, error) { return tlscert.FileFingerprint(path) }

// EnsureCertificate returns the server's TLS certificate kept in
// <stateDir>/tls/, made on first use, and its fingerprint in the
// installer's format. See [tlscert.EnsureCertificate].
func EnsureCertificate(ctx context.Context, stateDir string, hosts []string) (tls.Certificate, string, error) {
	return tlscert.EnsureCertificate(ctx, stateDir, hosts)
}
