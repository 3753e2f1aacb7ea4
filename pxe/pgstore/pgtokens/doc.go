// Package pgtokens keeps the management API's tokens
// ([apitoken.Tokens]) in PostgreSQL: a row per token holding its name,
// scope, expiry and the SHA-256 of the token, never the token, with a
// UNIQUE name so that of racing creates of one name on any host exactly
// one wins. A revocation on one host is refused on every host from its
// next request. It does not check expiry: the API does.
package pgtokens
