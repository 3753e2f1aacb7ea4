package apitoken

import (
	"context"
	"time"
)

// Tokens is the store of the API's tokens: their hashes and scopes,
// never a token. Package pxe/store/folder is the state folder's
// implementation.
type Tokens interface {
	// Create makes a token under name with scope and returns it, once. A
	// non-zero expires is kept with it ([Token.Expires]); one not in the
	// future is refused with an error wrapping [ErrExpired]. The API,
	// not the store, refuses a token once it expired.
	Create(ctx context.Context, name string, scope Scope, expires time.Time) (string, error)
	// Revoke removes the token name, which is refused from then on.
	Revoke(ctx context.Context, name string) error
	// List returns the tokens sorted by name.
	List(ctx context.Context) ([]Token, error)
	// Authenticate returns the stored token whose hash is token's, or an
	// error wrapping [ErrUnknownToken]; it compares in constant time.
	Authenticate(ctx context.Context, token string) (Token, error)
	// Recheck returns t as stored now, for a request that lasts: an
	// error wrapping [ErrUnknownToken] once it was revoked or made again.
	Recheck(ctx context.Context, t Token) (Token, error)
}

// Flusher is a [Tokens] that keeps the last-used times in memory and
// writes them now and then: a daemon calls Flush as it stops, so none
// is lost.
type Flusher interface {
	// Flush writes the last-used times not yet written.
	Flush()
}
