package nodes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/internal/regularfile"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/internal/hostname"
	"github.com/plasmactl/plasma-node/internal/lockfile"
	"github.com/plasmactl/plasma-node/internal/usage"
)

// Errors callers branch on.
var (
	// ErrPlatformNotFound: the platform has no platform.yaml.
	ErrPlatformNotFound = usage.New("platform not found")
	// ErrNodeNotFound: no node file has the hostname.
	ErrNodeNotFound = usage.New("node not found")
	// ErrExists: a create found the platform or node already there.
	ErrExists = usage.New("already exists")
	// ErrAmbiguous: a hostname names nodes in several platforms.
	ErrAmbiguous = usage.New("ambiguous")
	// ErrInvalidName: a platform name or hostname is not an RFC 1123 label.
	ErrInvalidName = usage.New("invalid name")
	// ErrNotRegularFile: a platform.yaml or node file that a write would
	// replace is a symbolic link, a FIFO or a folder; it also wraps
	// regularfile's error saying which.
	ErrNotRegularFile = usage.New("not a regular file")
	// ErrLocked: another operation holds the platform's lock.
	ErrLocked = lockfile.ErrLocked
)

// File and folder names under a project.
const (
	PlatformsDir = "platforms"
	platformFile = "platform.yaml"
	NodesDir     = "nodes"
	lockName     = ".lock"
	nodeExt      = ".yaml"
)

// Options configure a Store. The zero value is ready to use.
type Options struct {
	// Logger receives warnings; nil discards them.
	Logger *slog.Logger
}

// Store reads and writes the node and platform files of one project
// folder. It is safe for concurrent use; methods that change files expect
// the caller to hold the platform's [Store.Lock] when other processes may
// write too.
type Store struct {
	dir string
	log *slog.Logger
}

// Open returns a Store over the project folder dir (the one holding
// platforms/). It does no I/O.
func Open(dir string, opts Options) *Store {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Store{dir: dir, log: log}
}

// Dir returns the project folder.
func (s *Store) Dir() string { return s.dir }

// platformDir returns platforms/<name> under the project folder.
func (s *Store) platformDir(name string) string {
	return filepath.Join(s.dir, PlatformsDir, name)
}

// PlatformPath returns the platform.yaml of the platform.
func (s *Store) PlatformPath(name string) string { return s.platformPath(name) }

func (s *Store) platformPath(name string) string {
	return filepath.Join(s.platformDir(name), platformFile)
}

func (s *Store) nodesDir(platform string) string {
	return filepath.Join(s.platformDir(platform), NodesDir)
}

// NodePath returns the file a node of the platform is stored in.
func (s *Store) NodePath(platform, hostname string) string {
	return filepath.Join(s.nodesDir(platform), hostname+nodeExt)
}

// Lock takes the platform's lock, recording who holds it. With wait it
// retries until ctx ends; otherwise it fails at once. Either way a failure
// wraps [ErrLocked] and names the holder. Holding the lock, it removes
// temporary files a killed writer left behind, and refuses, with an
// error wrapping [ErrNotRegularFile], a platform whose platform.yaml or
// a node file is a symbolic link, a FIFO or a folder: every writer
// takes the lock first, so nothing is written.
func (s *Store) Lock(ctx context.Context, platform, who string, wait bool) (*Lock, error) {
	dir := s.platformDir(platform)
	if _, err := os.Stat(dir); err != nil {
		return nil, s.platformErr(platform, err)
	}
	path := filepath.Join(dir, lockName)
	var (
		l   *lockfile.Lock
		err error
	)
	if wait {
		l, err = lockfile.AcquireReporting(ctx, path, who, 0, func(held *lockfile.HeldError, waited time.Duration) {
			args := []any{"platform", platform, "holder", held.Who}
			if held.PID != 0 {
				args = append(args, "pid", held.PID)
			}
			if !held.Since.IsZero() {
				args = append(args, "since", held.Since.Format(time.RFC3339))
			}
			if waited >= time.Second {
				args = append(args, "waited", waited.Round(time.Second).String())
			}
			s.log.Warn("waiting for the platform's lock", args...)
		})
	} else {
		l, err = lockfile.TryLock(path, who)
	}
	if err != nil {
		return nil, fmt.Errorf("platform %s: %w", platform, err)
	}
	for _, d := range []string{dir, s.nodesDir(platform)} {
		if err := atomicfile.CleanTemp(d); err != nil {
			s.log.Warn("cannot remove leftover temporary files", "dir", d, "err", err)
		}
	}
	if err := s.checkReplaceable(platform); err != nil {
		l.Unlock()
		return nil, err
	}
	return &Lock{l: l}, nil
}

// Lock is a platform's lock held by [Store.Lock], until Unlock. The lock
// is also released when the process ends.
type Lock struct {
	l *lockfile.Lock
}

// Unlock releases the lock; a second call does nothing.
func (l *Lock) Unlock() error {
	if l == nil {
		return nil
	}
	return l.l.Unlock()
}

// Platforms returns the names of the platforms that have a platform.yaml,
// sorted.
func (s *Store) Platforms(ctx context.Context) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(s.dir, PlatformsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list platforms: %w", err)
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if _, err := os.Stat(s.platformPath(e.Name())); err == nil {
			out = append(out, e.Name())
		}
	}
	return out, ctx.Err()
}

func (s *Store) platformErr(name string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		known, _ := s.Platforms(context.Background())
		hint := "none yet; create one with: plasma-node add " + name
		if len(known) > 0 {
			hint = strings.Join(known, ", ")
		}
		return fmt.Errorf("platform %q: %w (known platforms: %s)", name, ErrPlatformNotFound, hint)
	}
	return fmt.Errorf("platform %s: %w", name, err)
}

// Platform loads platforms/<name>/platform.yaml. A missing file is an error
// wrapping [ErrPlatformNotFound]; a malformed one wraps [ErrMalformed].
func (s *Store) Platform(ctx context.Context, name string) (*Platform, error) {
	p, _, err := s.loadPlatform(ctx, name)
	return p, err
}

func (s *Store) loadPlatform(ctx context.Context, name string) (*Platform, *document, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	path := s.platformPath(name)
	data, err := regularfile.Read(path, maxFileSize)
	if err != nil {
		return nil, nil, s.platformErr(name, err)
	}
	p := &Platform{}
	doc, err := parseDocument(s.rel(path), data, p)
	if err != nil {
		return nil, nil, err
	}
	if p.Name == "" {
		p.Name = name
	}
	p.file = path
	p.lines = doc.lines()
	if doc.root != nil {
		p.unknown = unknownKeys(s.rel(path), doc.root.Content[0])
	}
	return p, doc, nil
}

// CreatePlatform writes a new platforms/<p.Name>/platform.yaml and the
// nodes/ folder. An existing platform is an error wrapping [ErrExists].
func (s *Store) CreatePlatform(ctx context.Context, p *Platform) error {
	if err := ValidatePlatformName(p.Name); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := (&document{}).update(&Platform{}, p)
	if err != nil {
		return fmt.Errorf("encode platform %s: %w", p.Name, err)
	}
	if err := os.MkdirAll(s.nodesDir(p.Name), 0o755); err != nil {
		return fmt.Errorf("create platform %s: %w", p.Name, err)
	}
	if err := atomicfile.CreateExclusive(s.platformPath(p.Name), data, 0o644); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("platform %s: %w", p.Name, ErrExists)
		}
		return err
	}
	p.file = s.platformPath(p.Name)
	return nil
}

// UpdatePlatform loads the platform, calls fn on it and writes the change
// back, keeping the file's comments, order and unknown fields. When fn
// returns an error, nothing is written. Callers hold the platform's lock.
func (s *Store) UpdatePlatform(ctx context.Context, name string, fn func(*Platform) error) (*Platform, error) {
	p, doc, err := s.loadPlatform(ctx, name)
	if err != nil {
		return nil, err
	}
	old := clonePlatform(p)
	if err := fn(p); err != nil {
		return nil, err
	}
	data, err := doc.update(old, p)
	if err != nil {
		return nil, fmt.Errorf("encode platform %s: %w", name, err)
	}
	if err := atomicfile.WriteFile(s.platformPath(name), data, fileMode(s.platformPath(name))); err != nil {
		return nil, err
	}
	return p, nil
}

// Nodes loads every node of the platform, sorted by hostname. A malformed
// node file or platform.yaml is an error naming it; the platform must
// exist.
func (s *Store) Nodes(ctx context.Context, platform string) ([]*Node, error) {
	if _, _, err := s.loadPlatform(ctx, platform); err != nil {
		return nil, err
	}
	return s.loadNodes(ctx, platform)
}

func (s *Store) loadNodes(ctx context.Context, platform string) ([]*Node, error) {
	out, broken, err := s.scanNodes(ctx, platform)
	if err != nil {
		return nil, err
	}
	if len(broken) > 0 {
		errs := make([]error, len(broken))
		for i, b := range broken {
			errs[i] = b.Err
		}
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// BrokenFile is a node file that could not be read.
type BrokenFile struct {
	// Platform is the platform the file is in.
	Platform string `json:"platform" yaml:"platform"`
	// File is the file's path.
	File string `json:"file" yaml:"file"`
	// Err says why it could not be read, naming the file and, for a
	// malformed one, the line; it wraps [ErrMalformed] then.
	Err error `json:"-" yaml:"-"`
}

// ScanNodes loads the nodes of the platform as [Store.Nodes] does, except
// that a node file that cannot be read does not stop it: such files are
// returned as broken, the other nodes as usual. The platform must exist.
func (s *Store) ScanNodes(ctx context.Context, platform string) ([]*Node, []BrokenFile, error) {
	if _, _, err := s.loadPlatform(ctx, platform); err != nil {
		return nil, nil, err
	}
	return s.scanNodes(ctx, platform)
}

func (s *Store) scanNodes(ctx context.Context, platform string) ([]*Node, []BrokenFile, error) {
	dir := s.nodesDir(platform)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("list nodes of %s: %w", platform, err)
	}
	var files []string
	for _, e := range ents {
		name := e.Name()
		// A folder named like a node file is listed too: it is reported
		// as broken (not a regular file), never skipped silently.
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, nodeExt) {
			continue
		}
		files = append(files, filepath.Join(dir, name))
	}
	out := make([]*Node, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(runtime.GOMAXPROCS(0), max(1, len(files))) {
		wg.Go(func() {
			for i := range next {
				out[i], _, errs[i] = s.loadNodeFile(platform, files[i])
			}
		})
	}
	for i := range files {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	var broken []BrokenFile
	good := out[:0]
	for i, n := range out {
		if errs[i] != nil {
			broken = append(broken, BrokenFile{Platform: platform, File: files[i], Err: errs[i]})
			continue
		}
		good = append(good, n)
	}
	slices.SortFunc(good, func(a, b *Node) int { return hostname.Compare(a.Hostname, b.Hostname) })
	return good, broken, nil
}

func (s *Store) loadNodeFile(platform, path string) (*Node, *document, error) {
	data, err := regularfile.Read(path, maxFileSize)
	if err != nil {
		return nil, nil, fmt.Errorf("read node %s: %w", s.rel(path), err)
	}
	n := &Node{}
	doc, err := parseDocument(s.rel(path), data, n)
	if err != nil {
		return nil, nil, err
	}
	if n.Hostname == "" {
		n.Hostname = strings.TrimSuffix(filepath.Base(path), nodeExt)
	}
	n.Platform = platform
	n.file = path
	return n, doc, nil
}

// Node loads one node of a platform by hostname: the file <hostname>.yaml,
// or else the file whose hostname field says so. Not found is an error
// wrapping [ErrNodeNotFound].
func (s *Store) Node(ctx context.Context, platform, hostname string) (*Node, error) {
	n, _, err := s.loadNode(ctx, platform, hostname)
	return n, err
}

func (s *Store) loadNode(ctx context.Context, platform, hostname string) (*Node, *document, error) {
	if _, err := os.Stat(s.platformPath(platform)); err != nil {
		return nil, nil, s.platformErr(platform, err)
	}
	path := s.NodePath(platform, hostname)
	if filepath.Base(path) == hostname+nodeExt && !strings.ContainsAny(hostname, `/\`) {
		n, doc, err := s.loadNodeFile(platform, path)
		if err == nil && n.Hostname == hostname {
			return n, doc, nil
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
	}
	all, broken, err := s.scanNodes(ctx, platform)
	if err != nil {
		return nil, nil, err
	}
	for _, n := range all {
		if n.Hostname == hostname {
			return s.loadNodeFile(platform, n.file)
		}
	}
	return nil, nil, fmt.Errorf("node %q in platform %s: %w%s", hostname, platform, ErrNodeNotFound, brokenNote(broken))
}

// FindNode looks a hostname up in every platform. Not found wraps
// [ErrNodeNotFound]; a hostname in several platforms wraps [ErrAmbiguous]
// and lists them.
func (s *Store) FindNode(ctx context.Context, hostname string) (*Node, error) {
	plats, err := s.Platforms(ctx)
	if err != nil {
		return nil, err
	}
	var all []*Node
	var broken []BrokenFile
	for _, p := range plats {
		ns, b, err := s.ScanNodes(ctx, p)
		if err != nil {
			return nil, err
		}
		all, broken = append(all, ns...), append(broken, b...)
	}
	var found []*Node
	for _, n := range all {
		if n.Hostname == hostname {
			found = append(found, n)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("node %q: %w in any platform%s", hostname, ErrNodeNotFound, brokenNote(broken))
	case 1:
		return found[0], nil
	}
	var in []string
	for _, n := range found {
		in = append(in, n.Platform)
	}
	return nil, fmt.Errorf("node %q: %w: it is in platforms %s; choose one with -e PLATFORM", hostname, ErrAmbiguous, strings.Join(in, ", "))
}

// CreateNode writes a new node file, platforms/<n.Platform>/nodes/<n.Hostname>.yaml.
// An existing file is an error wrapping [ErrExists]; the platform must exist.
func (s *Store) CreateNode(ctx context.Context, n *Node) error {
	if err := ValidateHostname(n.Hostname); err != nil {
		return err
	}
	if _, err := os.Stat(s.platformPath(n.Platform)); err != nil {
		return s.platformErr(n.Platform, err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := (&document{}).update(&Node{}, n)
	if err != nil {
		return fmt.Errorf("encode node %s: %w", n.Hostname, err)
	}
	if err := os.MkdirAll(s.nodesDir(n.Platform), 0o755); err != nil {
		return fmt.Errorf("create node %s: %w", n.Hostname, err)
	}
	path := s.NodePath(n.Platform, n.Hostname)
	if err := atomicfile.CreateExclusive(path, data, 0o644); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("node %s in platform %s: %w (%s)", n.Hostname, n.Platform, ErrExists, s.rel(path))
		}
		return err
	}
	n.file = path
	return nil
}

// UpdateNode loads a node, calls fn on it and writes the change back,
// keeping the file's comments, order and unknown fields. fn must not
// change the hostname or platform. When fn returns an error or changes
// nothing, nothing is written. Callers hold the platform's lock.
func (s *Store) UpdateNode(ctx context.Context, platform, hostname string, fn func(*Node) error) (*Node, error) {
	n, doc, err := s.loadNode(ctx, platform, hostname)
	if err != nil {
		return nil, err
	}
	old := cloneNode(n)
	if err := fn(n); err != nil {
		return nil, err
	}
	if n.Hostname != old.Hostname || n.Platform != old.Platform {
		return nil, fmt.Errorf("update node %s: hostname and platform cannot change", hostname)
	}
	if equalNodeValues(old, n) {
		return n, nil
	}
	data, err := doc.update(old, n)
	if err != nil {
		return nil, fmt.Errorf("encode node %s: %w", hostname, err)
	}
	if err := atomicfile.WriteFile(n.file, data, fileMode(n.file)); err != nil {
		return nil, err
	}
	return n, nil
}

// DeleteNode removes a node's file.
func (s *Store) DeleteNode(ctx context.Context, platform, hostname string) error {
	n, err := s.Node(ctx, platform, hostname)
	if err != nil {
		return err
	}
	if err := os.Remove(n.file); err != nil {
		return fmt.Errorf("delete node %s: %w", hostname, err)
	}
	return atomicfile.SyncDir(filepath.Dir(n.file))
}

// fileMode returns the mode a rewrite keeps: the file's own (a
// platform.yaml made 0600 for its tokens stays so), else 0644.
func fileMode(path string) os.FileMode {
	if st, err := os.Stat(path); err == nil {
		return st.Mode().Perm()
	}
	return 0o644
}

// Rel shortens a path for messages: relative to the project folder when
// inside it, else as it is.
func (s *Store) Rel(path string) string { return s.rel(path) }

// rel shortens a path for messages: relative to the project when inside it.
func (s *Store) rel(path string) string {
	if r, err := filepath.Rel(s.dir, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

// LockTimeout is a sensible time to wait for a platform's lock in
// interactive commands.
const LockTimeout = 30 * time.Second

// brokenNote names the node files that could not be read, for a
// not-found error: the node may be in one of them.
func brokenNote(broken []BrokenFile) string {
	if len(broken) == 0 {
		return ""
	}
	var names []string
	for _, b := range broken {
		names = append(names, b.File)
	}
	return " (node files that could not be read: " + strings.Join(names, ", ") + ")"
}
