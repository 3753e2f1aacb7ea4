// Package tokenstest is the conformance suite of [apitoken.Tokens], the
// store of the API's tokens: every implementation runs it (the state
// folder's, [apitoken.Store], in go test ./...; an embedder's own the
// same way), by [Run] with a [Harness] that makes stores of it.
//
// It checks that a created token authenticates with its name and scope
// and nothing near it does; that a revoked token no longer authenticates
// nor passes a recheck, also through another handle on the same state (a
// second process); that a token is kept as its hash only (the hex SHA-256
// of [apitoken.Token].Hash), never itself; that names and scopes are
// refused as the errors say; and that concurrent creators each get their
// token, one winner per name.
//
// Comparing a presented token's hash with the stored ones in constant
// time is the implementation's job (crypto/subtle): no test here can
// show it, so an implementation must say how it does it.
package tokenstest
