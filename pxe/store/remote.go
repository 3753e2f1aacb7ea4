package store

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/enrol"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/idempotency"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/secret"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// Remote is the stores a store URL keeps for a whole site, shared by its
// hosts: everything but what is one host's own (boot assets, the
// certificate, first-boot files, the record of the window serving on
// the host), which stays in the state folder. An [Opener] makes one;
// package pxe/store/postgres's keeps them in PostgreSQL.
type Remote interface {
	// Name names the store in messages, never with its password.
	Name() string
	// Registrations returns the registrations.
	Registrations() registry.Registrations
	// Secrets opens the nodes' secrets, sealed with the host's key in
	// keyFile (made 0600 by the store's first host).
	Secrets(ctx context.Context, keyFile string) (secret.Store, error)
	// SiteSecrets opens the site's named secrets, sealed with the host's
	// key in keyFile as Secrets' are.
	SiteSecrets(ctx context.Context, keyFile string) (secret.Site, error)
	// Events returns the event store.
	Events() events.Store
	// Installs returns the installers' reports.
	Installs() registry.Installs
	// Tokens returns the API's tokens.
	Tokens() apitoken.Tokens
	// Replies returns the API's idempotency records.
	Replies() idempotency.Store
	// Discovered returns the discovery inbox.
	Discovered() discovery.Store
	// SiteWindow returns the site's window.
	SiteWindow() window.SiteStore
	// Rules returns the enrolment rules.
	Rules() enrol.Store
	// Close closes the store's connections.
	Close()
}

// RemoteOptions tune an [Opener]: [Options]' settings for a [Remote].
type RemoteOptions struct {
	// Logger receives the stores' logs; never nil.
	Logger *slog.Logger
	// Discovery bounds the discovery inbox.
	Discovery discovery.Limits
	// Timeout bounds connecting and each call; 0 means the store's
	// default.
	Timeout time.Duration
}

// Opener opens the [Remote] that a store URL names. Its errors never
// hold the URL's password.
type Opener func(ctx context.Context, url string, o RemoteOptions) (Remote, error)

// Openers are the remote stores a program can open, by URL scheme in
// lower case ("postgres"). A program offers a store by adding its opener
// (package pxe/store/postgres's Register), so one that never names a
// store URL never links that store's driver.
type Openers map[string]Opener

// Schemes returns the schemes of o, sorted, for messages.
func (o Openers) Schemes() []string {
	s := make([]string, 0, len(o))
	for k := range o {
		s = append(s, k+"://")
	}
	slices.Sort(s)
	return s
}

// Scheme returns the URL scheme of setting in lower case, "" for a path.
func Scheme(setting string) string {
	m := schemeRE.FindStringSubmatch(setting)
	if m == nil {
		return ""
	}
	return strings.ToLower(m[1])
}
