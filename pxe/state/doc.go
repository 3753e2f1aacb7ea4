// Package state opens node-provisioner's stores from one setting: the
// registrations ([registry.Registrations]), the nodes' secrets
// ([secret.Store]), the API's tokens ([apitoken.Tokens]) and the
// installers' reports ([registry.Installs]). Today
// the setting is a state folder (a path, or a file:// URL); [Open] is
// where another scheme is dispatched, and an unknown one is refused
// ([ErrUnknownScheme]).
//
// It also declares, once, the environment variables both binaries and
// the SDK read and the default state folder.
package state
