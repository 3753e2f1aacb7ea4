package folder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/internal/hostname"
	"github.com/plasmactl/plasma-node/internal/regularfile"
	"github.com/plasmactl/plasma-node/pxe/registry"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/internal/lockfile"
)

// File names in the registrations folder.
const (
	registrationsDirName = "registrations"
	pendingSuffix        = ".json"
	consumedSuffix       = ".json.consumed"
	claimInfix           = ".json.claim-"
	regLockName          = ".lock"
)

// Registrations is the registrations folder, <state-dir>/registrations/: one
// <name>.json per pending registration, <name>.json.consumed once served.
// Its methods are safe for concurrent use, also by several processes
// (writers take a lock file in the folder).
type Registrations struct {
	dir string
	log *slog.Logger
	mu  sync.Mutex // serialises this process's lock holders
	// lastRecord is the lock file's record of this store's last hold,
	// and dirty says another holder had the lock since, or a
	// consumption of this store failed half-way: only then can the
	// folder hold what [Registrations.cleanLocked] cleans (guarded by mu).
	lastRecord string
	dirty      bool
	// cache holds the decoded registration files by path, each with the
	// file version it was read from (see cache.go): a scan stats every
	// file but reads only those that changed.
	cacheMu sync.Mutex
	cache   map[string]cachedFile
}

// HasRegistrations reports whether stateDir holds a registrations folder, without
// creating anything; a stateDir that is there but is not a folder is an
// error.
func HasRegistrations(stateDir string) (bool, error) {
	fi, err := os.Stat(stateDir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	case !fi.IsDir():
		return false, fmt.Errorf("node-provisioner state folder %s: not a folder", stateDir)
	}
	_, err = os.Stat(filepath.Join(stateDir, registrationsDirName))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// OpenRegistrations opens <stateDir>/registrations/, creating it (and stateDir)
// with mode 0700 if needed. When no other process is writing, it removes
// temporary files a killed writer left and recovers an interrupted
// [Registrations.Consume]. log may be nil.
func OpenRegistrations(stateDir string, log *slog.Logger) (*Registrations, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir := filepath.Join(stateDir, registrationsDirName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open registrations %s: %w", dir, err)
	}
	g := &Registrations{dir: dir, log: log}
	lk, err := lockfile.TryLock(g.lockPath(), "node-provisioner registry")
	if errors.Is(err, lockfile.ErrLocked) {
		return g, nil // the holder cleans up after itself
	}
	if err != nil {
		return nil, fmt.Errorf("open registrations %s: %w", dir, err)
	}
	defer lk.Unlock()
	if err := g.cleanLocked(); err != nil {
		return nil, err
	}
	return g, nil
}

// Dir returns the registrations folder.
func (g *Registrations) Dir() string { return g.dir }

func (g *Registrations) lockPath() string { return filepath.Join(g.dir, regLockName) }
func (g *Registrations) pendingPath(name string) string {
	return filepath.Join(g.dir, name+pendingSuffix)
}
func (g *Registrations) consumedPath(name string) string {
	return filepath.Join(g.dir, name+consumedSuffix)
}

// lock takes this process's mutex and the folder's lock file; the
// returned func releases both.
func (g *Registrations) lock(ctx context.Context, who string) (func(), error) {
	g.mu.Lock()
	lk, err := lockfile.Acquire(ctx, g.lockPath(), who, 5*time.Millisecond)
	if err != nil {
		g.mu.Unlock()
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("lock registrations %s: %w: %w", g.dir, ctxErr, err)
		}
		return nil, fmt.Errorf("lock registrations %s: %w", g.dir, err)
	}
	// A killed holder leaves its record in the file: one that is not
	// this store's last means another holder had the lock meanwhile.
	if lk.Previous() != g.lastRecord || g.lastRecord == "" {
		g.dirty = true
	}
	g.lastRecord = lk.Record()
	return func() {
		lk.Unlock()
		g.mu.Unlock()
	}, nil
}

// cleanLocked runs with the lock held: it removes temporary files and
// recovers interrupted consumptions.
func (g *Registrations) cleanLocked() error {
	if err := atomicfile.CleanTemp(g.dir); err != nil {
		return err
	}
	return g.recoverClaims()
}

// Put is [Registrations.Register] without options: it writes a registration,
// replacing one of the same name (replaced is then true), and refuses a
// pin another pending registration holds ([registry.ErrPinTaken]).
func (g *Registrations) Put(ctx context.Context, r registry.Registration) (replaced bool, err error) {
	res, err := g.Register(ctx, r, registry.RegisterOptions{})
	return res.Previous != nil, err
}

// Get returns the pending registration name, or an error wrapping
// [registry.ErrNotFound] (or [registry.ErrInvalidName] for a bad name).
func (g *Registrations) Get(ctx context.Context, name string) (registry.Registration, error) {
	if err := ctx.Err(); err != nil {
		return registry.Registration{}, fmt.Errorf("get registration %s: %w", name, err)
	}
	if err := registry.ValidateName(name); err != nil {
		return registry.Registration{}, err
	}
	r, err := g.readFile(g.pendingPath(name), name)
	if errors.Is(err, os.ErrNotExist) {
		return registry.Registration{}, fmt.Errorf("%w named %q", registry.ErrNotFound, name)
	}
	return r, err
}

// Delete removes the pending registration name. An unknown name gives an
// error wrapping [registry.ErrNotFound]. A consumed record is kept.
func (g *Registrations) Delete(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("delete registration %s: %w", name, err)
	}
	if err := registry.ValidateName(name); err != nil {
		return err
	}
	path := g.pendingPath(name)
	if err := os.Remove(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w named %q", registry.ErrNotFound, name)
		}
		return fmt.Errorf("delete registration %s: %w", name, err)
	}
	g.log.Info("registration deleted", "node", name, "file", path)
	return atomicfile.SyncDir(g.dir)
}

// Pending returns the pending registrations sorted by name. Temporary,
// consumed and claimed files are not pending; a file that cannot be read
// or parsed is skipped with a warning naming it.
func (g *Registrations) Pending(ctx context.Context) ([]registry.Registration, error) {
	return g.list(ctx, pendingSuffix)
}

// Consumed returns the consumed registrations (<name>.json.consumed)
// sorted by name, each with Consumed set (empty for a TAPPaaS file that
// recorded nothing). Unreadable files are skipped with a warning.
func (g *Registrations) Consumed(ctx context.Context) ([]registry.Registration, error) {
	rs, err := g.list(ctx, consumedSuffix)
	for i := range rs {
		if rs[i].Consumed == nil {
			rs[i].Consumed = &registry.ConsumeRecord{}
		}
	}
	return rs, err
}

func (g *Registrations) list(ctx context.Context, suffix string) ([]registry.Registration, error) {
	out, _, err := g.scan(ctx, suffix)
	return out, err
}

// Scan returns the pending registrations, sorted by name, and the pending
// files that cannot be read.
func (g *Registrations) Scan(ctx context.Context) ([]registry.Registration, []registry.Broken, error) {
	return g.scan(ctx, pendingSuffix)
}

func (g *Registrations) scan(ctx context.Context, suffix string) ([]registry.Registration, []registry.Broken, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("list registrations %s: %w", g.dir, err)
	}
	ents, err := os.ReadDir(g.dir)
	if err != nil {
		return nil, nil, fmt.Errorf("list registrations %s: %w", g.dir, err)
	}
	var out []registry.Registration
	var broken []registry.Broken
	seen := map[string]bool{}
	defer g.forget(suffix, seen)
	for _, e := range ents {
		base := e.Name()
		if !strings.HasSuffix(base, suffix) || strings.HasPrefix(base, ".") || atomicfile.IsTemp(base) {
			continue
		}
		stem := strings.TrimSuffix(base, suffix)
		path := filepath.Join(g.dir, base)
		if suffix == pendingSuffix && strings.HasSuffix(stem, ".json") {
			continue // not <name>.json
		}
		if err := registry.ValidateName(stem); err != nil {
			g.log.Warn("skipping registration file with a bad name", "file", path, "err", err)
			continue
		}
		key, cacheable := fileKey{}, false
		if info, err := e.Info(); err == nil {
			key, cacheable = keyOf(info)
		}
		if cacheable {
			seen[path] = true
			if r, ok := g.cached(path, key); ok {
				out = append(out, r)
				continue
			}
		}
		r, line, err := g.readFileLine(path, stem)
		if err == nil && cacheable {
			g.remember(path, key, r)
		}
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) { // consumed meanwhile
				g.log.Warn("registration cannot be read", "file", path, "err", err)
				broken = append(broken, registry.Broken{Name: stem, File: path, Line: line, Err: err})
			}
			continue
		}
		out = append(out, r)
	}
	// In the order people read names: tappaas3 before tappaas10.
	sort.SliceStable(out, func(i, j int) bool { return hostname.Compare(out[i].Name, out[j].Name) < 0 })
	return out, broken, nil
}

// readFile reads and decodes one registration file; a missing file gives
// an error matching os.ErrNotExist.
func (g *Registrations) readFile(path, stem string) (registry.Registration, error) {
	r, _, err := g.readFileLine(path, stem)
	return r, err
}

// readFileLine is readFile that also gives the line of a JSON syntax or
// type error, 0 when none is known.
func (g *Registrations) readFileLine(path, stem string) (registry.Registration, int, error) {
	r, data, err := g.readFileData(path, stem)
	if err != nil && data != nil {
		return r, registry.ErrorLine(data), err
	}
	return r, 0, err
}

// readFileData is readFile that also gives the bytes read (nil when
// none were).
func (g *Registrations) readFileData(path, stem string) (registry.Registration, []byte, error) {
	data, err := regularfile.Read(path, registry.MaxRegistrationSize)
	if errors.Is(err, regularfile.ErrTooLarge) {
		return registry.Registration{}, nil, fmt.Errorf("read registration %s: %w", path, invalid("larger than %d bytes", registry.MaxRegistrationSize))
	}
	if err != nil {
		return registry.Registration{}, nil, fmt.Errorf("read registration %s: %w", path, err)
	}
	r, err := registry.DecodeRegistration(data, stem)
	if err != nil {
		return registry.Registration{}, data, fmt.Errorf("read registration %s: %w", path, err)
	}
	return r, data, nil
}

// AsksForBootDisk is [registry.AsksForBootDisk] of g.
func (g *Registrations) AsksForBootDisk(ctx context.Context) (bool, error) {
	return registry.AsksForBootDisk(ctx, g)
}

var _ registry.Registrations = (*Registrations)(nil)

// invalid is a refusal of what a registration file holds: it matches
// [registry.ErrInvalidRegistration].
func invalid(format string, args ...any) error {
	return &invalidError{fmt.Sprintf(format, args...), registry.ErrInvalidRegistration}
}
