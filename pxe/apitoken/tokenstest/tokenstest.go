package tokenstest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/storetest"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
)

// T is what a check needs of a test ([storetest.T]).
type T = storetest.T

// Harness gives the suite stores of the implementation under test.
type Harness struct {
	// New returns a new, empty store for one check. Required.
	New func(t T) apitoken.Tokens
	// Other returns a second handle on s's state, as another process
	// would open it. Nil skips the checks across processes.
	Other func(t T, s apitoken.Tokens) apitoken.Tokens
	// Stored returns everything s keeps at rest. Nil skips the check
	// that only hashes are kept.
	Stored func(t T, s apitoken.Tokens) [][]byte
}

// Check is one conformance check.
type Check = storetest.Check[Harness]

// Checks returns the suite's checks.
func Checks() []Check {
	return []Check{
		{Name: "CreateAuthenticate", Run: createAuthenticate},
		{Name: "Refusals", Run: refusals},
		{Name: "ExpiryKept", Run: expiryKept},
		{Name: "ListHoldsNoToken", Run: listHoldsNoToken},
		{Name: "RevokedNoLongerAuthenticates", Run: revoked},
		{Name: "RevokedInAnotherProcess", Run: revokedElsewhere},
		{Name: "HashesOnly", Run: hashesOnly},
		{Name: "ConcurrentCreates", Run: concurrentCreates},
	}
}

// Run runs every check as a subtest of t.
func Run(t *testing.T, h Harness) { storetest.Run(t, h, Checks()) }

func create(t T, s apitoken.Tokens, name string, scope apitoken.Scope) string {
	t.Helper()
	tok, err := s.Create(context.Background(), name, scope, time.Time{})
	storetest.NoError(t, err, "Create "+name)
	if tok == "" {
		t.Fatalf("Create %s returned an empty token", name)
	}
	return tok
}

// refused checks that tok does not authenticate, and that the error
// does not quote it.
func refused(t T, s apitoken.Tokens, what, tok string) {
	t.Helper()
	got, err := s.Authenticate(context.Background(), tok)
	if !errors.Is(err, apitoken.ErrUnknownToken) {
		t.Errorf("Authenticate of %s = %+v, %v; want ErrUnknownToken", what, got, err)
	}
	if err != nil && len(tok) > 8 && strings.Contains(err.Error(), tok) {
		t.Errorf("Authenticate of %s: the error quotes the token: %v", what, err)
	}
}

func authenticates(t T, s apitoken.Tokens, tok, name string, scope apitoken.Scope) apitoken.Token {
	t.Helper()
	got, err := s.Authenticate(context.Background(), tok)
	if err != nil {
		t.Errorf("Authenticate of %s's token: %v", name, err)
		return got
	}
	if got.Name != name || got.Scope != scope || got.Hash != apitoken.Hash(tok) {
		t.Errorf("Authenticate = %+v; want %s with scope %s and the token's hash", got, name, scope)
	}
	return got
}

func createAuthenticate(t T, h Harness) {
	s := h.New(t)
	a := create(t, s, "ci", apitoken.ScopeRegister)
	b := create(t, s, "ops.admin", apitoken.ScopeAdmin)
	if a == b {
		t.Fatalf("two tokens are the same")
	}
	authenticates(t, s, a, "ci", apitoken.ScopeRegister)
	authenticates(t, s, b, "ops.admin", apitoken.ScopeAdmin)
	last := a[len(a)-1]
	other := byte('A')
	if last == 'A' {
		other = 'B'
	}
	for what, tok := range map[string]string{
		"an empty token":          "",
		"a token cut short":       a[:len(a)-1],
		"a token one letter off":  a[:len(a)-1] + string(other),
		"a token with more":       a + "x",
		"the token's hash":        apitoken.Hash(a),
		"two tokens run together": a + b,
	} {
		refused(t, s, what, tok)
	}
}

func refusals(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	first := create(t, s, "ci", apitoken.ScopeRead)
	if tok, err := s.Create(ctx, "ci", apitoken.ScopeAdmin, time.Time{}); !errors.Is(err, apitoken.ErrExists) {
		t.Errorf("Create of an existing name = %q, %v; want ErrExists", tok, err)
	}
	authenticates(t, s, first, "ci", apitoken.ScopeRead)
	for _, name := range []string{"", ".hidden", "a/b", "with space", strings.Repeat("n", 64)} {
		if _, err := s.Create(ctx, name, apitoken.ScopeRead, time.Time{}); !errors.Is(err, apitoken.ErrInvalidName) {
			t.Errorf("Create of name %q = %v, want ErrInvalidName", name, err)
		}
	}
	if _, err := s.Create(ctx, "root", apitoken.Scope("root"), time.Time{}); !errors.Is(err, apitoken.ErrInvalidScope) {
		t.Errorf("Create with scope root = %v, want ErrInvalidScope", err)
	}
	if err := s.Revoke(ctx, "nobody"); !errors.Is(err, apitoken.ErrNotFound) {
		t.Errorf("Revoke of an unknown name = %v, want ErrNotFound", err)
	}
	toks, err := s.List(ctx)
	storetest.NoError(t, err, "List")
	if len(toks) != 1 || toks[0].Name != "ci" || toks[0].Scope != apitoken.ScopeRead {
		t.Errorf("after refusals List = %+v; want ci (read) only", toks)
	}
}

// expiryKept: a token's expiry is kept to the second and given back by
// Authenticate, Recheck and List (the API refuses the token by it); one
// without stays without; an expiry not in the future is refused and
// stores nothing.
func expiryKept(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	at := time.Now().Add(90 * time.Minute).UTC().Truncate(time.Second)
	tok, err := s.Create(ctx, "nightly", apitoken.ScopeRead, at)
	storetest.NoError(t, err, "Create with an expiry")
	plain := create(t, s, "ci", apitoken.ScopeRead)
	got := authenticates(t, s, tok, "nightly", apitoken.ScopeRead)
	if !got.Expires.Equal(at) {
		t.Errorf("Authenticate: Expires = %v, want %v", got.Expires, at)
	}
	if again, err := s.Recheck(ctx, got); err != nil || !again.Expires.Equal(at) {
		t.Errorf("Recheck = %v (expires %v), want the token expiring %v", err, again.Expires, at)
	}
	if p := authenticates(t, s, plain, "ci", apitoken.ScopeRead); !p.Expires.IsZero() {
		t.Errorf("a token made without an expiry expires %v", p.Expires)
	}
	if h.Other != nil {
		if o := authenticates(t, h.Other(t, s), tok, "nightly", apitoken.ScopeRead); !o.Expires.Equal(at) {
			t.Errorf("another process reads Expires = %v, want %v", o.Expires, at)
		}
	}
	for what, when := range map[string]time.Time{"an expiry in the past": time.Now().Add(-time.Hour), "an expiry of now": time.Now()} {
		if tk, err := s.Create(ctx, "late", apitoken.ScopeAdmin, when); !errors.Is(err, apitoken.ErrExpired) {
			t.Errorf("Create with %s = %q, %v; want ErrExpired", what, tk, err)
		}
	}
	toks, err := s.List(ctx)
	storetest.NoError(t, err, "List")
	var names []string
	for _, tk := range toks {
		names = append(names, tk.Name)
		if tk.Name == "nightly" && !tk.Expires.Equal(at) {
			t.Errorf("List: nightly expires %v, want %v", tk.Expires, at)
		}
	}
	if !slices.Equal(names, []string{"ci", "nightly"}) {
		t.Errorf("List = %v, want ci and nightly (the refused ones stored nothing)", names)
	}
}

func listHoldsNoToken(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	if toks, err := s.List(ctx); err != nil || len(toks) != 0 {
		t.Errorf("List of a new store = %+v, %v; want none", toks, err)
	}
	tokens := map[string]string{}
	for _, n := range []string{"zeta", "alpha", "mid"} {
		tokens[n] = create(t, s, n, apitoken.ScopeRead)
	}
	toks, err := s.List(ctx)
	storetest.NoError(t, err, "List")
	var names []string
	for _, tk := range toks {
		names = append(names, tk.Name)
		if tk.Hash != apitoken.Hash(tokens[tk.Name]) {
			t.Errorf("List: %s's hash %q is not its token's", tk.Name, tk.Hash)
		}
		if s := fmt.Sprintf("%+v", tk); strings.Contains(s, tokens[tk.Name]) {
			t.Errorf("List: %s holds its token", tk.Name)
		}
		if tk.Created.IsZero() {
			t.Errorf("List: %s has no creation time", tk.Name)
		}
	}
	if !slices.Equal(names, []string{"alpha", "mid", "zeta"}) {
		t.Errorf("List names = %v, want alpha, mid, zeta (sorted)", names)
	}
}

func revoked(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	a := create(t, s, "ci", apitoken.ScopeAdmin)
	b := create(t, s, "other", apitoken.ScopeRead)
	held := authenticates(t, s, a, "ci", apitoken.ScopeAdmin)
	if got, err := s.Recheck(ctx, held); err != nil || got.Name != "ci" {
		t.Errorf("Recheck before revoking = %+v, %v; want ci", got, err)
	}
	storetest.NoError(t, s.Revoke(ctx, "ci"), "Revoke")
	refused(t, s, "a revoked token", a)
	if got, err := s.Recheck(ctx, held); !errors.Is(err, apitoken.ErrUnknownToken) {
		t.Errorf("Recheck of a revoked token = %+v, %v; want ErrUnknownToken", got, err)
	}
	authenticates(t, s, b, "other", apitoken.ScopeRead)
	again := create(t, s, "ci", apitoken.ScopeRead)
	refused(t, s, "a revoked token after its name was made again", a)
	if got, err := s.Recheck(ctx, held); !errors.Is(err, apitoken.ErrUnknownToken) {
		t.Errorf("Recheck of a revoked token whose name was made again = %+v, %v; want ErrUnknownToken", got, err)
	}
	authenticates(t, s, again, "ci", apitoken.ScopeRead)
	storetest.NoError(t, s.Revoke(ctx, "ci"), "Revoke again")
	if err := s.Revoke(ctx, "ci"); !errors.Is(err, apitoken.ErrNotFound) {
		t.Errorf("Revoke twice = %v, want ErrNotFound", err)
	}
}

func revokedElsewhere(t T, h Harness) {
	if h.Other == nil {
		t.Logf("no Other: revocation across processes not checked")
		return
	}
	ctx := context.Background()
	s := h.New(t)
	o := h.Other(t, s)
	a := create(t, s, "ci", apitoken.ScopeAdmin)
	held := authenticates(t, o, a, "ci", apitoken.ScopeAdmin)
	storetest.NoError(t, s.Revoke(ctx, "ci"), "Revoke")
	refused(t, o, "a token another process revoked", a)
	if got, err := o.Recheck(ctx, held); !errors.Is(err, apitoken.ErrUnknownToken) {
		t.Errorf("Recheck of a token another process revoked = %+v, %v; want ErrUnknownToken", got, err)
	}
	b := create(t, o, "made-elsewhere", apitoken.ScopeRead)
	authenticates(t, s, b, "made-elsewhere", apitoken.ScopeRead)
}

func hashesOnly(t T, h Harness) {
	if h.Stored == nil {
		t.Logf("no Stored: what is kept at rest is not checked")
		return
	}
	ctx := context.Background()
	s := h.New(t)
	var toks []string
	for _, n := range []string{"ci", "ops"} {
		tok := create(t, s, n, apitoken.ScopeRegister)
		authenticates(t, s, tok, n, apitoken.ScopeRegister)
		toks = append(toks, tok)
	}
	if _, err := s.List(ctx); err != nil {
		t.Fatalf("List: %v", err)
	}
	stored := h.Stored(t, s)
	for _, tok := range toks {
		body := strings.TrimPrefix(tok, apitoken.Prefix)
		hash := apitoken.Hash(tok)
		found := false
		for _, data := range stored {
			if strings.Contains(string(data), body[len(body)/2:]) {
				t.Errorf("a token is kept at rest (or half of it is)")
			}
			found = found || strings.Contains(strings.ToLower(string(data)), hash)
		}
		if !found {
			t.Errorf("a token's hash is kept nowhere at rest")
		}
	}
}

func concurrentCreates(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	handles := []apitoken.Tokens{s}
	if h.Other != nil {
		handles = append(handles, h.Other(t, s))
	}
	const n = 24
	toks := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			toks[i], errs[i] = handles[i%len(handles)].Create(ctx, fmt.Sprintf("racer%02d", i), apitoken.ScopeRead, time.Time{})
		})
	}
	const same = 12
	sameToks := make([]string, same)
	sameErrs := make([]error, same)
	for i := range same {
		wg.Go(func() {
			sameToks[i], sameErrs[i] = handles[i%len(handles)].Create(ctx, "one-name", apitoken.ScopeRead, time.Time{})
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Errorf("Create racer%02d: %v", i, errs[i])
			continue
		}
		authenticates(t, s, toks[i], fmt.Sprintf("racer%02d", i), apitoken.ScopeRead)
	}
	winners := 0
	for i := range same {
		switch {
		case sameErrs[i] == nil:
			winners++
			authenticates(t, s, sameToks[i], "one-name", apitoken.ScopeRead)
		case !errors.Is(sameErrs[i], apitoken.ErrExists):
			t.Errorf("a losing Create of one name = %v, want ErrExists", sameErrs[i])
		}
	}
	if winners != 1 {
		t.Errorf("%d of %d racing Creates of one name won, want 1", winners, same)
	}
	list, err := s.List(ctx)
	storetest.NoError(t, err, "List")
	if len(list) != n+1 {
		t.Errorf("List after the racers holds %d tokens, want %d", len(list), n+1)
	}
}
