package apitoken

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"time"
)

// Names in the state folder.
const (
	// DirName is the API's folder in the state folder (mode 0700).
	DirName = "api"
	// Prefix starts every token, so that a leaked one is recognised.
	Prefix = "npt_"
)

// Scope is what a token may do. Each scope may do what the ones before
// it may.
type Scope string

// The scopes, weakest first.
const (
	ScopeRead     Scope = "read"
	ScopeRegister Scope = "register"
	ScopeAdmin    Scope = "admin"
)

var scopeRank = map[Scope]int{ScopeRead: 1, ScopeRegister: 2, ScopeAdmin: 3}

// ParseScope returns the scope named s, or an error wrapping
// [ErrInvalidScope].
func ParseScope(s string) (Scope, error) {
	if _, ok := scopeRank[Scope(s)]; !ok {
		return "", fmt.Errorf("%w %q: want admin, register or read", ErrInvalidScope, s)
	}
	return Scope(s), nil
}

// Allows reports whether a token of scope s may do what need requires.
func (s Scope) Allows(need Scope) bool {
	r := scopeRank[s]
	return r > 0 && r >= scopeRank[need]
}

// Errors of the store.
var (
	// ErrInvalidScope: a scope that is not admin, register or read.
	ErrInvalidScope = errors.New("invalid scope")
	// ErrInvalidName: a token name that is not 1 to 63 letters, digits,
	// '-', '_' or '.'.
	ErrInvalidName = errors.New("invalid token name")
	// ErrExists: a token of that name exists.
	ErrExists = errors.New("token exists")
	// ErrNotFound: no token of that name.
	ErrNotFound = errors.New("no such token")
	// ErrUnknownToken: the token presented is not one of the store's (or
	// was revoked). Its message never holds the token.
	ErrUnknownToken = errors.New("unknown or revoked token")
	// ErrExpired: a token asked to expire at a time not in the future.
	ErrExpired = errors.New("token expiry not in the future")
)

var nameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// CheckName returns an error wrapping [ErrInvalidName] unless name is a
// token's name: 1 to 63 letters, digits, '-', '_' or '.', starting with
// a letter or digit.
func CheckName(name string) error {
	if !nameRe.MatchString(name) {
		return fmt.Errorf("%w %q: want 1 to 63 letters, digits, '-', '_' or '.', starting with a letter or digit", ErrInvalidName, name)
	}
	return nil
}

// Token is one stored token: never the token itself.
type Token struct {
	// Name names the token (who or what uses it).
	Name string `json:"name"`
	// Scope is what it may do.
	Scope Scope `json:"scope"`
	// Hash is the hex SHA-256 of the token.
	Hash string `json:"sha256"`
	// Created is when it was made.
	Created time.Time `json:"created"`
	// Expires is when it stops being accepted; zero for never.
	Expires time.Time `json:"expires,omitzero"`
	// LastUsed is when the daemon last accepted it; zero for never, filled
	// in by List.
	LastUsed time.Time `json:"-"`
}

// Expired reports whether t is no longer accepted at now: it has an
// expiry and now is not before it.
func (t Token) Expired(now time.Time) bool {
	return !t.Expires.IsZero() && !now.Before(t.Expires)
}

// checkExpiry returns an error wrapping [ErrExpired] unless expires is
// zero (never) or after now: a token must not be made already expired,
// which a store could read as one that never expires.
func checkExpiry(expires, now time.Time) error {
	if !expires.IsZero() && !expires.After(now) {
		return fmt.Errorf("%w: %s is not after %s", ErrExpired, expires.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return nil
}

// Hash returns the hex SHA-256 of a token, as the store keeps it.
func Hash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Mint makes a token named name with scope, expiring at expires (zero:
// never), after checking the three ([CheckName], [ParseScope],
// and that expires is not past now): it returns the token, 32 random bytes
// after [Prefix], to be shown once and kept nowhere, and the record a
// store keeps of it (its [Hash], created now). Every store's Create
// mints with it.
func Mint(name string, scope Scope, expires, now time.Time) (string, Token, error) {
	if err := CheckName(name); err != nil {
		return "", Token{}, err
	}
	if _, err := ParseScope(string(scope)); err != nil {
		return "", Token{}, err
	}
	if err := checkExpiry(expires, now); err != nil {
		return "", Token{}, err
	}
	if !expires.IsZero() {
		expires = expires.UTC()
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", Token{}, fmt.Errorf("api tokens: %w", err)
	}
	tok := Prefix + base64.RawURLEncoding.EncodeToString(raw[:])
	return tok, Token{Name: name, Scope: scope, Hash: Hash(tok), Created: now.UTC().Truncate(time.Second), Expires: expires}, nil
}
