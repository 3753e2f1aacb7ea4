// Package tokenfile keeps the API's tokens in the state folder: their
// hashes and scopes in api/tokens.json (0600, in a 0700 folder), when
// each was last used in api/tokens-used.json, changes under a lock file
// so that several processes may write. [*Store] implements
// [apitoken.Tokens]; it passes the suite in package
// apitoken/tokenstest. pxe/store is the one place that opens it.
package tokenfile
