package folder

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/internal/lockfile"
	"github.com/plasmactl/plasma-node/internal/regularfile"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
)

// Names in the API's folder.
const (
	// TokensFile holds the tokens' hashes (mode 0600).
	TokensFile = "tokens.json"
	// TokensUsedFile holds when each token was last used.
	TokensUsedFile = "tokens-used.json"
	tokensLockName = "tokens.lock"
	// usedFlush is how often the last-used times are written at most.
	usedFlush = 10 * time.Second
)

var _ apitoken.Tokens = (*Tokens)(nil)

type tokensFile struct {
	Tokens []apitoken.Token `json:"tokens"`
}

// Tokens is the token file of one state folder. Its methods are safe for
// concurrent use; writers of several processes take a lock file.
type Tokens struct {
	dir string
	log *slog.Logger
	now func() time.Time

	mu        sync.Mutex
	stamp     fileStamp
	tokens    []apitoken.Token
	used      map[string]time.Time
	usedDirty bool
	flushed   time.Time
	timer     *time.Timer
}

// fileStamp tells whether the token file changed since it was read.
type fileStamp struct {
	ok    bool
	ino   uint64
	size  int64
	mtime time.Time
}

// OpenTokens returns the store of stateDir, creating <stateDir>/api with mode
// 0700 (and tightening it if it is looser). log may be nil.
func OpenTokens(stateDir string, log *slog.Logger) (*Tokens, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir := filepath.Join(stateDir, apitoken.DirName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("api tokens: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("api tokens: %w", err)
	}
	return &Tokens{dir: dir, log: log, now: time.Now, used: map[string]time.Time{}}, nil
}

// Dir returns the store's folder.
func (s *Tokens) Dir() string { return s.dir }

func (s *Tokens) path() string { return filepath.Join(s.dir, TokensFile) }

// read reads the token file; a missing one holds no tokens.
func (s *Tokens) read() ([]apitoken.Token, error) {
	data, err := regularfile.Read(s.path(), maxFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("api tokens: %w", err)
	}
	var f tokensFile
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("api tokens %s: %w", s.path(), err)
	}
	return f.Tokens, nil
}

// change runs fn on the tokens under the lock and writes the result.
func (s *Tokens) change(ctx context.Context, who string, fn func([]apitoken.Token) ([]apitoken.Token, error)) error {
	lk, err := lockfile.Acquire(ctx, filepath.Join(s.dir, tokensLockName), who, 0)
	if err != nil {
		return fmt.Errorf("api tokens: %w", err)
	}
	defer lk.Unlock()
	toks, err := s.read()
	if err != nil {
		return err
	}
	if toks, err = fn(toks); err != nil {
		return err
	}
	data, err := json.MarshalIndent(tokensFile{Tokens: nonNil(toks)}, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(s.path(), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("api tokens: %w", err)
	}
	return nil
}

func nonNil(t []apitoken.Token) []apitoken.Token {
	if t == nil {
		return []apitoken.Token{}
	}
	return t
}

// Create makes a token: it returns the token, which is shown once and
// kept nowhere, and stores its hash under name with scope.
func (s *Tokens) Create(ctx context.Context, name string, scope apitoken.Scope, expires time.Time) (string, error) {
	tok, t, err := apitoken.Mint(name, scope, expires, s.now())
	if err != nil {
		return "", err
	}
	err = s.change(ctx, "node-provisioner token create", func(toks []apitoken.Token) ([]apitoken.Token, error) {
		if slices.ContainsFunc(toks, func(t apitoken.Token) bool { return t.Name == name }) {
			return nil, fmt.Errorf("%w: %q (revoke it first)", apitoken.ErrExists, name)
		}
		return append(toks, t), nil
	})
	if err != nil {
		return "", err
	}
	s.log.Info("api token created", "name", name, "scope", string(scope))
	return tok, nil
}

// Revoke removes the token name; a running daemon refuses it from its
// next request.
func (s *Tokens) Revoke(ctx context.Context, name string) error {
	err := s.change(ctx, "node-provisioner token revoke", func(toks []apitoken.Token) ([]apitoken.Token, error) {
		i := slices.IndexFunc(toks, func(t apitoken.Token) bool { return t.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("%w named %q", apitoken.ErrNotFound, name)
		}
		return slices.Delete(toks, i, i+1), nil
	})
	if err == nil {
		s.log.Info("api token revoked", "name", name)
	}
	return err
}

// List returns the tokens (hashes, never tokens) sorted by name, with
// when each was last used.
func (s *Tokens) List(_ context.Context) ([]apitoken.Token, error) {
	toks, err := s.read()
	if err != nil {
		return nil, err
	}
	used := s.readUsed()
	s.mu.Lock()
	for n, t := range s.used {
		if t.After(used[n]) {
			used[n] = t
		}
	}
	s.mu.Unlock()
	for i := range toks {
		toks[i].LastUsed = used[toks[i].Name]
	}
	slices.SortFunc(toks, func(a, b apitoken.Token) int { return strings.Compare(a.Name, b.Name) })
	return toks, nil
}

// Authenticate returns the stored token whose hash is that of token, or
// an error wrapping [apitoken.ErrUnknownToken]. Every stored hash is compared, in
// constant time. The token file is read again when it changed, so a
// revocation counts at once.
func (s *Tokens) Authenticate(_ context.Context, token string) (apitoken.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refreshLocked(); err != nil {
		return apitoken.Token{}, err
	}
	sum := sha256.Sum256([]byte(token))
	var found apitoken.Token
	ok := 0
	for _, t := range s.tokens {
		want, err := hex.DecodeString(t.Hash)
		if err != nil || len(want) != sha256.Size {
			continue
		}
		if subtle.ConstantTimeCompare(sum[:], want) == 1 {
			found, ok = t, 1
		}
	}
	if ok != 1 {
		return apitoken.Token{}, apitoken.ErrUnknownToken
	}
	s.markUsedLocked(found.Name)
	return found, nil
}

// Recheck returns t as the token file holds it now, for a request that
// lasts (an event stream): an error wrapping [apitoken.ErrUnknownToken] once it
// was revoked or made again under its name, else the stored token (its
// scope may have changed), which counts as a use.
func (s *Tokens) Recheck(_ context.Context, t apitoken.Token) (apitoken.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refreshLocked(); err != nil {
		return apitoken.Token{}, err
	}
	for _, c := range s.tokens {
		if c.Name == t.Name && subtle.ConstantTimeCompare([]byte(c.Hash), []byte(t.Hash)) == 1 {
			s.markUsedLocked(c.Name)
			return c, nil
		}
	}
	return apitoken.Token{}, fmt.Errorf("token %q: %w", t.Name, apitoken.ErrUnknownToken)
}

// markUsedLocked records a use of the token name, written within
// usedFlush.
func (s *Tokens) markUsedLocked(name string) {
	now := s.now().UTC().Truncate(time.Second)
	_, before := s.used[name]
	s.used[name] = now
	s.usedDirty = true
	// A token's first use in this process is written at once: token list
	// of another process must never call a token in use "never used".
	if wait := usedFlush - now.Sub(s.flushed); wait <= 0 || !before {
		s.flushLocked()
	} else if s.timer == nil {
		s.timer = time.AfterFunc(wait, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.timer = nil
			s.flushLocked()
		})
	}
}

// refreshLocked re-reads the token file when its stamp changed.
func (s *Tokens) refreshLocked() error {
	st := stampOf(s.path())
	if st == s.stamp {
		return nil
	}
	if !st.ok {
		s.tokens, s.stamp = nil, st
		return nil
	}
	toks, err := s.read()
	if err != nil {
		// Fail closed: no token is accepted while the file is bad.
		s.tokens, s.stamp = nil, fileStamp{}
		return err
	}
	s.tokens, s.stamp = toks, st
	return nil
}

func stampOf(path string) fileStamp {
	fi, err := os.Lstat(path)
	if err != nil {
		return fileStamp{}
	}
	st := fileStamp{ok: true, size: fi.Size(), mtime: fi.ModTime()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = uint64(sys.Ino)
	}
	return st
}

// readUsed reads the last-used times; a missing or bad file gives none.
func (s *Tokens) readUsed() map[string]time.Time {
	out := map[string]time.Time{}
	data, err := regularfile.Read(filepath.Join(s.dir, TokensUsedFile), maxFile)
	if err == nil {
		json.Unmarshal(data, &out)
	}
	return out
}

// Flush writes the last-used times not yet written; a daemon calls it as
// it stops.
func (s *Tokens) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.flushLocked()
}

func (s *Tokens) flushLocked() {
	if !s.usedDirty {
		return
	}
	used := s.readUsed()
	for n, t := range s.used {
		if t.After(used[n]) {
			used[n] = t
		}
	}
	data, err := json.Marshal(used)
	if err == nil {
		err = atomicfile.WriteFile(filepath.Join(s.dir, TokensUsedFile), data, 0o600)
	}
	if err != nil {
		s.log.Warn("cannot record when api tokens were last used", "err", err)
		return
	}
	s.usedDirty, s.flushed = false, s.now()
}
