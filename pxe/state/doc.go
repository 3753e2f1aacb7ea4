// Package state opens node-provisioner's stores from one setting: the
// registrations ([registry.Registrations]), the nodes' secrets
// ([secret.Store]), the API's tokens ([apitoken.Tokens]), the event log
// the installers' reports ([registry.Installs]) and the site's window
// ([sitewindow.Store]). The setting is a
// state folder (a path, or a file:// URL) and, with [Options].Store, a
// PostgreSQL URL whose stores (package pgstore's) replace the folder's
// for all of these; the folder keeps what is the host's own. An unknown
// scheme is refused ([ErrUnknownScheme]). [Copy] moves a folder's state
// into a new PostgreSQL store.
//
// It also declares, once, the environment variables both binaries and
// the SDK read and the default state folder.
package state
