package apitoken_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/apitoken"
)

// TestMint: a minted token starts with the prefix, its record holds its
// hash (never the token), the UTC expiry and the creation to the second;
// a bad name, scope or a past expiry mints nothing; two mints differ.
func TestMint(t *testing.T) {
	now := time.Date(2026, 12, 5, 17, 0, 0, 500, time.FixedZone("x", 3600))
	expires := now.Add(time.Hour)
	tok, rec, err := apitoken.Mint("ci", apitoken.ScopeRead, expires, now)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok, apitoken.Prefix) || len(tok) != len(apitoken.Prefix)+43 {
		t.Errorf("token %q: want %s and 43 characters", tok, apitoken.Prefix)
	}
	want := apitoken.Token{Name: "ci", Scope: apitoken.ScopeRead, Hash: apitoken.Hash(tok), Created: now.UTC().Truncate(time.Second), Expires: expires.UTC()}
	if rec != want {
		t.Errorf("record = %+v, want %+v", rec, want)
	}
	if other, _, _ := apitoken.Mint("ci", apitoken.ScopeRead, time.Time{}, now); other == tok {
		t.Error("two mints gave one token")
	}
	if _, _, err := apitoken.Mint("ci", apitoken.ScopeRead, now.Add(-time.Second), now); !errors.Is(err, apitoken.ErrExpired) {
		t.Errorf("a past expiry: %v; want ErrExpired", err)
	}
	if _, _, err := apitoken.Mint("bad name", apitoken.ScopeRead, time.Time{}, now); err == nil {
		t.Error("a bad name minted a token")
	}
	if _, _, err := apitoken.Mint("ci", "root", time.Time{}, now); err == nil {
		t.Error("an unknown scope minted a token")
	}
}
