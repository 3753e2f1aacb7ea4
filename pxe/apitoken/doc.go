// Package apitoken keeps the bearer tokens of node-provisioner's
// management API: a token is 32 random bytes, shown once when it is
// created, and only its SHA-256 hash is stored, in tokens.json (mode
// 0600) of the folder <state-dir>/api (mode 0700). Each token has a name
// and a [Scope]: read may list and watch, register may also create and
// delete registrations, admin may also open and close windows and manage
// tokens.
//
// [Tokens] is the store's interface; package pxe/store/folder is the
// state folder's implementation (its Authenticate compares in constant
// time and re-reads the file when it changed, so a revoked token is
// refused at once by a running daemon), and apitoken/tokenstest the
// conformance suite every implementation runs.
package apitoken
