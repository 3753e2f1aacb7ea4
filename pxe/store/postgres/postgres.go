package postgres

import (
	"context"
	"log/slog"

	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/enrol"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/idempotency"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/secret"
	"github.com/plasmactl/plasma-node/pxe/store"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// The URL schemes [Register] adds.
const (
	Scheme     = "postgres"
	SchemeLong = "postgresql"
)

// Register adds the PostgreSQL store's opener to o under [Scheme] and
// [SchemeLong].
func Register(o store.Openers) {
	o[Scheme] = Open
	o[SchemeLong] = Open
}

// Openers returns a [store.Openers] that opens PostgreSQL stores only.
func Openers() store.Openers {
	o := store.Openers{}
	Register(o)
	return o
}

// IsURL reports whether setting is a PostgreSQL connection URL
// (postgres:// or postgresql://).
func IsURL(setting string) bool {
	s := store.Scheme(setting)
	return s == Scheme || s == SchemeLong
}

// Stores are the PostgreSQL stores of one database, on one pool. The
// registrations are opened with it, the rest when first asked for (by
// [store.Stores], which keeps each).
type Stores struct {
	db   *DB
	log  *slog.Logger
	lim  discovery.Limits
	regs *Registrations
}

var _ store.Remote = (*Stores)(nil)

// Open connects to the database url names and applies its migrations
// ([OpenDB]); it is the [store.Opener] of [Register].
func Open(ctx context.Context, url string, o store.RemoteOptions) (store.Remote, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	db, err := OpenDB(ctx, url, DBOptions{Timeout: o.Timeout, Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	return &Stores{db: db, log: o.Logger, lim: o.Discovery, regs: OpenRegistrations(db, o.Logger)}, nil
}

// Name names the database without its password.
func (s *Stores) Name() string { return s.db.Name() }

// Registrations returns the registrations.
func (s *Stores) Registrations() registry.Registrations { return s.regs }

// Secrets opens the secrets sealed with the host's key in keyFile; the
// store's first host makes the key file.
func (s *Stores) Secrets(ctx context.Context, keyFile string) (secret.Store, error) {
	return OpenSecrets(ctx, s.db, keyFile, SecretsOptions{Create: true})
}

// SiteSecrets opens the site's named secrets, sealed with the host's
// key in keyFile; the store's first host makes the key file.
func (s *Stores) SiteSecrets(ctx context.Context, keyFile string) (secret.Site, error) {
	return OpenSecrets(ctx, s.db, keyFile, SecretsOptions{Create: true})
}

// Events returns the event log.
func (s *Stores) Events() events.Store { return OpenEvents(s.db, EventsOptions{}) }

// Installs returns the installers' reports.
func (s *Stores) Installs() registry.Installs { return OpenInstalls(s.db) }

// Tokens returns the API's tokens.
func (s *Stores) Tokens() apitoken.Tokens { return OpenTokens(s.db, s.log) }

// Replies returns the API's idempotency records.
func (s *Stores) Replies() idempotency.Store { return OpenReplies(s.db) }

// Discovered returns the discovery inbox.
func (s *Stores) Discovered() discovery.Store { return OpenInbox(s.db, s.lim) }

// SiteWindow returns the site's window.
func (s *Stores) SiteWindow() window.SiteStore { return OpenSiteWindow(s.db) }

// Rules returns the enrolment rules.
func (s *Stores) Rules() enrol.Store { return OpenRules(s.db) }

// Close closes the pool.
func (s *Stores) Close() { s.db.Close() }
