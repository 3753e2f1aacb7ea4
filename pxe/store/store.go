package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/enrol"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/idempotency"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/secret"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// ErrUnknownScheme is wrapped by [Open]'s error for a setting with a
// scheme no store is built for.
var ErrUnknownScheme = errors.New("unknown store scheme")

// ErrNotAFolder is wrapped by [Open]'s error for a PostgreSQL URL given
// as the state folder: it goes in [Options].Store, beside a folder.
var ErrNotAFolder = errors.New("a store URL is not a state folder")

// Options tune [Open].
type Options struct {
	// SecretsDir is the secrets folder; empty means
	// [secret.DefaultDir].
	SecretsDir string
	// Logger receives the stores' logs; nil discards them.
	Logger *slog.Logger
	// Discovery bounds the discovery inbox; zero fields take
	// discovery's defaults.
	Discovery discovery.Limits
	// Store, a store URL (postgres://…), keeps the registrations,
	// secrets, tokens, idempotency records, events, install reports, the
	// discovery inbox and the site's window there, through the
	// [Opener] of its scheme in Openers; empty keeps them in the state
	// folder. The folder keeps the rest either way (boot assets, the
	// certificate, first-boot files, the record of the window serving on
	// the host, the site settings).
	Store string
	// Openers are the remote stores this program opens, by scheme; a
	// Store whose scheme has none is refused ([ErrUnknownScheme]).
	Openers Openers
	// KeyFile is the secrets key of a PostgreSQL store (0600; made on
	// the store's first host); empty means <state-dir>/store.key.
	KeyFile string
	// Timeout bounds connecting to a PostgreSQL store and each of its
	// calls; 0 means the store's default.
	Timeout time.Duration
}

// Stores are the stores of one setting. The registrations are opened by
// [Open]; the secrets and the tokens when first asked for.
type Stores struct {
	dir  string
	opts Options
	regs registry.Registrations

	remote        Remote                // the store URL's stores, nil for the folder's
	folderRegs    *folder.Registrations // the state folder's, for Recover
	folderSecrets *folder.Secrets

	mu          sync.Mutex
	secrets     secret.Store
	tokens      apitoken.Tokens
	replies     idempotency.Store
	events      events.Store
	installs    registry.Installs
	inbox       discovery.Store
	site        window.SiteStore
	rules       enrol.Store
	siteSecrets secret.Site
}

var schemeRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*)://`)

// Open opens the stores setting names: a state folder's path (created
// 0700 if missing), or file://PATH; with [Options].Store a PostgreSQL
// URL, the stores it names beside the folder. A PostgreSQL URL as the
// folder is refused with [ErrNotAFolder], any other scheme with
// [ErrUnknownScheme]. Errors never hold a URL's password.
// A process opens its stores once and shares them: each store has one
// writer per process.
func Open(ctx context.Context, setting string, o Options) (*Stores, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	dir, err := stateFolder(setting)
	if err != nil {
		return nil, err
	}
	s := &Stores{dir: dir, opts: o}
	if o.Store != "" {
		scheme := Scheme(o.Store)
		open := o.Openers[scheme]
		if open == nil {
			want := "none: this program keeps its stores in the state folder only"
			if len(o.Openers) > 0 {
				want = "a " + strings.Join(o.Openers.Schemes(), " or ") + " URL, or none for the state folder's"
			}
			return nil, fmt.Errorf("store: store scheme %q: %w: want %s", scheme, ErrUnknownScheme, want)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		r, err := open(ctx, o.Store, RemoteOptions{Logger: o.Logger, Discovery: o.Discovery, Timeout: o.Timeout})
		if err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		s.remote, s.regs = r, r.Registrations()
		return s, nil
	}
	regs, err := folder.OpenRegistrations(dir, o.Logger)
	if err != nil {
		return nil, err
	}
	s.regs, s.folderRegs = regs, regs
	return s, nil
}

// Exists reports whether setting names stores that hold registrations,
// creating nothing: for a state folder, whether it has a registrations
// folder. A program that only reads asks it before [Open], which would
// create the folder. Its errors are [Open]'s for the setting.
func Exists(setting string) (bool, error) {
	dir, err := stateFolder(setting)
	if err != nil {
		return false, err
	}
	return folder.HasRegistrations(dir)
}

// stateFolder returns the state folder setting names, refusing a scheme that
// is not file://.
func stateFolder(setting string) (string, error) {
	if setting == "" {
		return "", errors.New("store: no state folder or store URL given")
	}
	m := schemeRE.FindStringSubmatch(setting)
	if m == nil {
		return setting, nil
	}
	switch scheme := strings.ToLower(m[1]); scheme {
	case "file":
		dir := strings.TrimPrefix(setting[len(m[0]):], "localhost")
		if !filepath.IsAbs(dir) {
			return "", fmt.Errorf("state %q: a file:// URL needs an absolute path, such as file:///var/lib/node-provisioner", setting)
		}
		return dir, nil
	case "postgres", "postgresql": // whether this program opens them or not
		return "", fmt.Errorf("store: %w: give the state folder, and the %s:// URL as the store setting", ErrNotAFolder, scheme)
	default:
		return "", fmt.Errorf("store: %w %q: want a state folder's path or file://PATH", ErrUnknownScheme, scheme)
	}
}

// Dir returns the state folder, which also keeps what is one host's own
// (the window record, first-boot files, boot assets, the certificate).
func (s *Stores) Dir() string { return s.dir }

// Registrations returns the registrations.
func (s *Stores) Registrations() registry.Registrations { return s.regs }

// Secrets opens the nodes' secrets (the secrets folder, 0700) once.
func (s *Stores) Secrets(ctx context.Context) (secret.Store, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.secrets != nil {
		return s.secrets, nil
	}
	if s.remote != nil {
		sec, err := s.remote.Secrets(ctx, s.keyFile())
		if err != nil {
			return nil, err
		}
		s.secrets = sec
		return sec, nil
	}
	dir := s.opts.SecretsDir
	if dir == "" {
		var err error
		if dir, err = secret.DefaultDir(); err != nil {
			return nil, err
		}
	}
	sec, err := folder.OpenSecrets(dir)
	if err != nil {
		return nil, err
	}
	s.secrets, s.folderSecrets = sec, sec
	return sec, nil
}

// SiteSecrets opens the site's named secrets once: the state folder's
// site-secrets/ (0600 files in a 0700 folder), or the store URL's,
// sealed with the host's key as the nodes' secrets are.
func (s *Stores) SiteSecrets(ctx context.Context) (secret.Site, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.siteSecrets != nil:
	case s.remote != nil:
		sec, err := s.remote.SiteSecrets(ctx, s.keyFile())
		if err != nil {
			return nil, err
		}
		s.siteSecrets = sec
	default:
		s.siteSecrets = folder.OpenSiteSecrets(s.dir)
	}
	return s.siteSecrets, nil
}

// Recover is the stores' part in a window's start, under the state
// folder's lock: the state folder's run [folder.Recover]; a store URL's,
// shared by hosts, do nothing.
func (s *Stores) Recover(ctx context.Context) error {
	if s.remote != nil {
		return nil
	}
	if _, err := s.Secrets(ctx); err != nil {
		return err
	}
	return folder.Recover(ctx, s.folderRegs, s.folderSecrets, s.opts.Logger)
}

// Events returns the event store (the state folder's events.jsonl), the
// same one each time: the process's one writer of it, whose followers
// learn of its appends at once. It opens nothing until the first append.
func (s *Stores) Events() events.Store {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.events != nil:
	case s.remote != nil:
		s.events = s.remote.Events()
	default:
		s.events = folder.OpenEvents(folder.EventsPath(s.dir), folder.EventsOptions{})
	}
	return s.events
}

// Events returns the event store of setting without opening the other
// stores or creating anything, for a program that only reads events (it
// opens nothing until read). A program that writes them takes its
// [Stores]' ([Stores.Events]): one writer per process.
func Events(setting string) (events.Store, error) {
	dir, err := stateFolder(setting)
	if err != nil {
		return nil, err
	}
	return folder.OpenEvents(folder.EventsPath(dir), folder.EventsOptions{}), nil
}

// Installs opens the install reports (the state folder's installs/,
// 0700) once.
func (s *Stores) Installs() (registry.Installs, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.installs != nil {
		return s.installs, nil
	}
	if s.remote != nil {
		s.installs = s.remote.Installs()
		return s.installs, nil
	}
	in, err := folder.OpenInstalls(s.dir)
	if err != nil {
		return nil, err
	}
	s.installs = in
	return in, nil
}

// SiteWindow returns the site's window, the same one each time: the
// PostgreSQL store's, shared by the site's hosts, else the state
// folder's (<state-dir>/api/window.json), one host's. It opens nothing
// until used.
func (s *Stores) SiteWindow() window.SiteStore {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.site != nil:
	case s.remote != nil:
		s.site = s.remote.SiteWindow()
	default:
		s.site = folder.OpenSiteWindow(s.dir)
	}
	return s.site
}

// Window returns the record of the window serving on this host ([Window]
// of the stores' folder): a serving process records itself on its host
// whatever the store.
func (s *Stores) Window() window.Store { return Window(s.dir) }

// Window returns the window state of the state folder dir: its
// window.json and window.lock ([folder.Window]). It opens nothing, so it
// also reads a read-only or full state folder.
func Window(dir string) window.Store { return folder.Window(dir) }

// Tokens opens the API's tokens once.
func (s *Stores) Tokens() (apitoken.Tokens, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tokens != nil {
		return s.tokens, nil
	}
	if s.remote != nil {
		s.tokens = s.remote.Tokens()
		return s.tokens, nil
	}
	t, err := folder.OpenTokens(s.dir, s.opts.Logger)
	if err != nil {
		return nil, err
	}
	s.tokens = t
	return t, nil
}

// Replies opens the API's idempotency records (the state folder's
// api/idempotency/, or the PostgreSQL store's) once.
func (s *Stores) Replies() (idempotency.Store, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	switch {
	case s.replies != nil:
	case s.remote != nil:
		s.replies = s.remote.Replies()
	default:
		s.replies, err = folder.OpenReplies(s.dir, s.opts.Logger)
	}
	return s.replies, err
}

// Discovered opens the discovery inbox (the state folder's
// discovered.json, or the PostgreSQL store's) once.
func (s *Stores) Discovered() (discovery.Store, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inbox != nil {
		return s.inbox, nil
	}
	if s.remote != nil {
		s.inbox = s.remote.Discovered()
		return s.inbox, nil
	}
	in, err := folder.OpenInbox(s.dir, s.opts.Discovery)
	if err != nil {
		return nil, err
	}
	s.inbox = in
	return in, nil
}

// Rules returns the enrolment rules (the state folder's rules.json, or
// the PostgreSQL store's), the same store each time. It opens nothing
// until used.
func (s *Stores) Rules() enrol.Store {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.rules != nil:
	case s.remote != nil:
		s.rules = s.remote.Rules()
	default:
		s.rules = folder.OpenRules(s.dir)
	}
	return s.rules
}

// KeyFileName is the secrets key's file in the state folder when
// [Options].KeyFile is empty.
const KeyFileName = "store.key"

// keyFile is the secrets key's file: [Options].KeyFile, else
// <state-dir>/store.key.
func (s *Stores) keyFile() string {
	if s.opts.KeyFile != "" {
		return s.opts.KeyFile
	}
	return filepath.Join(s.dir, KeyFileName)
}

// Remote returns the store URL's stores, nil for the state folder's.
func (s *Stores) Remote() Remote { return s.remote }

// Store names the stores in messages: the state folder, or the store
// URL's without its password.
func (s *Stores) Store() string {
	if s.remote != nil {
		return s.remote.Name()
	}
	return s.dir
}

// Close closes the store URL's connections; a state folder's stores hold
// none.
func (s *Stores) Close() {
	if s.remote != nil {
		s.remote.Close()
	}
}
