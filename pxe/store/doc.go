// Package store opens node-provisioner's stores from one setting: the
// registrations ([registry.Registrations]), the nodes' secrets
// ([secret.Store]), the API's tokens ([apitoken.Tokens]) and idempotency
// records ([idempotency.Store]), the event log,
// the installers' reports ([registry.Installs]), the discovery inbox and
// the site's window ([window.SiteStore]). The setting is a state folder
// (a path, or a file:// URL) and, with [Options].Store, a store URL whose
// stores replace the folder's for all of these; the folder keeps what is
// the host's own.
//
// A store URL opens through the [Opener] of its scheme that the program
// gives in [Options].Openers (package pxe/store/postgres registers
// postgres://), in the manner of tailscale's ipn/store but without a
// package-level registry: a program that offers no store URL links no
// database driver. A scheme without an opener is refused
// ([ErrUnknownScheme]).
//
// The environment variables that name these settings, and the default
// state folder, are declared once in package pxe/registrar, which
// chooses between a state folder and the management API.
package store
