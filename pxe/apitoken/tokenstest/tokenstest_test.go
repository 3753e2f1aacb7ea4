package tokenstest_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/storetest"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/apitoken/tokenstest"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// fileHarness runs the suite on folder.Tokens in temporary state
// folders; wrap, when set, puts a fault in front of each handle.
func fileHarness(tb testing.TB, wrap func(*folder.Tokens) apitoken.Tokens) tokenstest.Harness {
	var mu sync.Mutex
	dirs := map[apitoken.Tokens]string{}
	open := func(t tokenstest.T, stateDir string) apitoken.Tokens {
		st, err := folder.OpenTokens(stateDir, nil)
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		var s apitoken.Tokens = st
		if wrap != nil {
			s = wrap(st)
		}
		mu.Lock()
		dirs[s] = stateDir
		mu.Unlock()
		return s
	}
	dirOf := func(s apitoken.Tokens) string {
		mu.Lock()
		defer mu.Unlock()
		return dirs[s]
	}
	return tokenstest.Harness{
		New:   func(t tokenstest.T) apitoken.Tokens { return open(t, tb.TempDir()) },
		Other: func(t tokenstest.T, s apitoken.Tokens) apitoken.Tokens { return open(t, dirOf(s)) },
		Stored: func(t tokenstest.T, s apitoken.Tokens) [][]byte {
			if f, ok := s.(interface{ Flush() }); ok {
				f.Flush()
			}
			var out [][]byte
			err := filepath.WalkDir(dirOf(s), func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				data, err := os.ReadFile(path)
				out = append(out, data)
				return err
			})
			if err != nil {
				t.Fatalf("stored: %v", err)
			}
			return out
		},
	}
}

func TestFileStoreConformance(t *testing.T) {
	tokenstest.Run(t, fileHarness(t, nil))
}

// broken wraps the token file with one fault.
type broken struct {
	*folder.Tokens
	fault string
	calls atomic.Int64
	mu    sync.Mutex
	seen  []string
	held  map[string]apitoken.Token
}

func (b *broken) Create(ctx context.Context, name string, scope apitoken.Scope, expires time.Time) (string, error) {
	if b.fault == "loses creates" && b.calls.Add(1)%5 == 0 {
		return apitoken.Prefix + "never-kept-" + name, nil
	}
	switch {
	case b.fault == "drops the expiry":
		expires = time.Time{}
	case b.fault == "takes a past expiry" && !expires.IsZero() && !expires.After(time.Now()):
		// What a store that checks nothing would do: a token made
		// already expired, which reads as never expiring once dropped.
		expires = time.Time{}
	}
	tok, err := b.Tokens.Create(ctx, name, scope, expires)
	if err == nil {
		b.mu.Lock()
		b.seen = append(b.seen, tok)
		b.mu.Unlock()
		if b.fault == "keeps tokens" {
			os.WriteFile(filepath.Join(b.Dir(), "plain-"+name), []byte(tok), 0o600)
		}
	}
	return tok, err
}

func (b *broken) Revoke(ctx context.Context, name string) error {
	if b.fault == "revoke forgets" {
		return nil
	}
	return b.Tokens.Revoke(ctx, name)
}

func (b *broken) Authenticate(ctx context.Context, token string) (apitoken.Token, error) {
	if b.fault == "caches forever" {
		b.mu.Lock()
		defer b.mu.Unlock()
		if t, ok := b.held[token]; ok {
			return t, nil
		}
		t, err := b.Tokens.Authenticate(ctx, token)
		if err == nil {
			if b.held == nil {
				b.held = map[string]apitoken.Token{}
			}
			b.held[token] = t
		}
		return t, err
	}
	t, err := b.Tokens.Authenticate(ctx, token)
	if err != nil && b.fault == "accepts a prefix" && len(token) >= 20 {
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, tok := range b.seen {
			if len(tok) >= 20 && tok[:20] == token[:20] {
				return b.Tokens.Authenticate(ctx, tok)
			}
		}
	}
	return t, err
}

func (b *broken) Recheck(ctx context.Context, t apitoken.Token) (apitoken.Token, error) {
	if b.fault == "recheck trusts" {
		return t, nil
	}
	return b.Tokens.Recheck(ctx, t)
}

// TestTheSuiteFailsABrokenStore feeds the suite a token file with one
// fault at a time: each is found by the check named.
func TestTheSuiteFailsABrokenStore(t *testing.T) {
	storetest.RejectsFaults(t, tokenstest.Checks(), [][2]string{
		{"revoke forgets", "RevokedNoLongerAuthenticates"},
		{"recheck trusts", "RevokedNoLongerAuthenticates"},
		{"caches forever", "RevokedInAnotherProcess"},
		{"keeps tokens", "HashesOnly"},
		{"accepts a prefix", "CreateAuthenticate"},
		{"loses creates", "ConcurrentCreates"},
		{"drops the expiry", "ExpiryKept"},
		{"takes a past expiry", "ExpiryKept"},
	}, func(t *testing.T, fault string) tokenstest.Harness {
		return fileHarness(t, func(s *folder.Tokens) apitoken.Tokens { return &broken{Tokens: s, fault: fault} })
	})
}
