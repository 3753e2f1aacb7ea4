package apitoken

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/internal/lockfile"
	"github.com/plasmactl/plasma-node/internal/regularfile"
)

// Names in the state folder.
const (
	// DirName is the API's folder in the state folder (mode 0700).
	DirName = "api"
	// FileName holds the tokens' hashes (mode 0600).
	FileName = "tokens.json"
	// UsedFileName holds when each token was last used.
	UsedFileName = "tokens-used.json"
	lockName     = "tokens.lock"
	maxFile      = 1 << 20
	// Prefix starts every token, so that a leaked one is recognised.
	Prefix = "npt_"
	// usedFlush is how often the last-used times are written at most.
	usedFlush = 10 * time.Second
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
)

var nameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

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
	// LastUsed is when the daemon last accepted it; zero for never. It is
	// kept in [UsedFileName] and filled in by [Store.List].
	LastUsed time.Time `json:"-"`
}

type file struct {
	Tokens []Token `json:"tokens"`
}

// Store is the token file of one state folder. Its methods are safe for
// concurrent use; writers of several processes take a lock file.
type Store struct {
	dir string
	log *slog.Logger
	now func() time.Time

	mu        sync.Mutex
	stamp     fileStamp
	tokens    []Token
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

// Open returns the store of stateDir, creating <stateDir>/api with mode
// 0700 (and tightening it if it is looser). log may be nil.
func Open(stateDir string, log *slog.Logger) (*Store, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir := filepath.Join(stateDir, DirName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("api tokens: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("api tokens: %w", err)
	}
	return &Store{dir: dir, log: log, now: time.Now, used: map[string]time.Time{}}, nil
}

// Dir returns the store's folder.
func (s *Store) Dir() string { return s.dir }

func (s *Store) path() string { return filepath.Join(s.dir, FileName) }

// Hash returns the hex SHA-256 of a token, as the store keeps it.
func Hash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// read reads the token file; a missing one holds no tokens.
func (s *Store) read() ([]Token, error) {
	data, err := regularfile.Read(s.path(), maxFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("api tokens: %w", err)
	}
	var f file
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("api tokens %s: %w", s.path(), err)
	}
	return f.Tokens, nil
}

// change runs fn on the tokens under the lock and writes the result.
func (s *Store) change(ctx context.Context, who string, fn func([]Token) ([]Token, error)) error {
	lk, err := lockfile.Acquire(ctx, filepath.Join(s.dir, lockName), who, 0)
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
	data, err := json.MarshalIndent(file{Tokens: nonNil(toks)}, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(s.path(), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("api tokens: %w", err)
	}
	return nil
}

func nonNil(t []Token) []Token {
	if t == nil {
		return []Token{}
	}
	return t
}

// Create makes a token: it returns the token, which is shown once and
// kept nowhere, and stores its hash under name with scope.
func (s *Store) Create(ctx context.Context, name string, scope Scope) (string, error) {
	if !nameRe.MatchString(name) {
		return "", fmt.Errorf("%w %q: want 1 to 63 letters, digits, '-', '_' or '.', starting with a letter or digit", ErrInvalidName, name)
	}
	if _, err := ParseScope(string(scope)); err != nil {
		return "", err
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("api tokens: %w", err)
	}
	tok := Prefix + base64.RawURLEncoding.EncodeToString(raw[:])
	err := s.change(ctx, "node-provisioner token create", func(toks []Token) ([]Token, error) {
		if slices.ContainsFunc(toks, func(t Token) bool { return t.Name == name }) {
			return nil, fmt.Errorf("%w: %q (revoke it first)", ErrExists, name)
		}
		return append(toks, Token{Name: name, Scope: scope, Hash: Hash(tok), Created: s.now().UTC().Truncate(time.Second)}), nil
	})
	if err != nil {
		return "", err
	}
	s.log.Info("api token created", "name", name, "scope", string(scope))
	return tok, nil
}

// Revoke removes the token name; a running daemon refuses it from its
// next request.
func (s *Store) Revoke(ctx context.Context, name string) error {
	err := s.change(ctx, "node-provisioner token revoke", func(toks []Token) ([]Token, error) {
		i := slices.IndexFunc(toks, func(t Token) bool { return t.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("%w named %q", ErrNotFound, name)
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
func (s *Store) List(_ context.Context) ([]Token, error) {
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
	slices.SortFunc(toks, func(a, b Token) int { return strings.Compare(a.Name, b.Name) })
	return toks, nil
}

// Authenticate returns the stored token whose hash is that of token, or
// an error wrapping [ErrUnknownToken]. Every stored hash is compared, in
// constant time. The token file is read again when it changed, so a
// revocation counts at once.
func (s *Store) Authenticate(_ context.Context, token string) (Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refreshLocked(); err != nil {
		return Token{}, err
	}
	sum := sha256.Sum256([]byte(token))
	var found Token
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
		return Token{}, ErrUnknownToken
	}
	s.markUsedLocked(found.Name)
	return found, nil
}

// Recheck returns t as the token file holds it now, for a request that
// lasts (an event stream): an error wrapping [ErrUnknownToken] once it
// was revoked or made again under its name, else the stored token (its
// scope may have changed), which counts as a use.
func (s *Store) Recheck(_ context.Context, t Token) (Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refreshLocked(); err != nil {
		return Token{}, err
	}
	for _, c := range s.tokens {
		if c.Name == t.Name && subtle.ConstantTimeCompare([]byte(c.Hash), []byte(t.Hash)) == 1 {
			s.markUsedLocked(c.Name)
			return c, nil
		}
	}
	return Token{}, fmt.Errorf("token %q: %w", t.Name, ErrUnknownToken)
}

// markUsedLocked records a use of the token name, written within
// usedFlush.
func (s *Store) markUsedLocked(name string) {
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
func (s *Store) refreshLocked() error {
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
func (s *Store) readUsed() map[string]time.Time {
	out := map[string]time.Time{}
	data, err := regularfile.Read(filepath.Join(s.dir, UsedFileName), maxFile)
	if err == nil {
		json.Unmarshal(data, &out)
	}
	return out
}

// Flush writes the last-used times not yet written; a daemon calls it as
// it stops.
func (s *Store) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.flushLocked()
}

func (s *Store) flushLocked() {
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
		err = atomicfile.WriteFile(filepath.Join(s.dir, UsedFileName), data, 0o600)
	}
	if err != nil {
		s.log.Warn("cannot record when api tokens were last used", "err", err)
		return
	}
	s.usedDirty, s.flushed = false, s.now()
}
