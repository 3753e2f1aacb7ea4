package regbackend

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/internal/regularfile"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/secret"
)

// FirstBootDirName is the folder of the state folder that holds the
// first-boot scripts and webhook tokens of answered nodes.
const FirstBootDirName = "first-boot"

// DefaultAllowRefresh is how long [Backend.Allow] trusts the lists of
// registrations it read before it reads them again in the background.
const DefaultAllowRefresh = 2 * time.Second

// DefaultAllowMaxAge is how long [Backend.Allow] answers from its last
// lists while their read again hangs (a store that does not answer)
// before it admits nobody.
const DefaultAllowMaxAge = 15 * time.Second

// Config configures a [Backend]. Store, Secrets, StateDir and
// Events are required.
type Config struct {
	// Store holds the registrations, the allowlist.
	Store registry.Registrations
	// Secrets receives each answered node's root password.
	Secrets secret.Store
	// StateDir holds the first-boot scripts (in first-boot/).
	StateDir string
	// Events is the event store the backend records to and reads its
	// history from (package pxe/store opens the state folder's).
	Events events.Store
	// Installs keeps what each node's installer reports when it is done
	// (package pxe/store opens the state folder's). Nil keeps nothing:
	// the webhook still marks the node installed.
	Installs registry.Installs
	// Site returns the shared settings; it is called for every answer so
	// that a changed settings file takes effect. Nil means defaults.
	Site func() (registry.Site, error)
	// AllowRefresh is how long [Backend.Allow] caches the registrations.
	// Default: [DefaultAllowRefresh].
	AllowRefresh time.Duration
	// AllowMaxAge is how long a read of the lists [Backend.Allow]
	// answers from may hang (a store that does not answer) before nobody
	// is admitted (no proxy-DHCP offer) until a read ends. Default:
	// [DefaultAllowMaxAge]; it is at least twice AllowRefresh.
	AllowMaxAge time.Duration
	// Logger receives refusals and answers; nil discards them.
	Logger *slog.Logger
	// Recover is the stores' part in [Backend.Start] ([Stores].Recover):
	// the state folder's refuse a folder an answer cannot be written to
	// and clean up after a killed window. Nil: none (stores shared by hosts).
	Recover func(context.Context) error
	// Now returns the time; nil means time.Now.
	Now func() time.Time
}

// Backend is node-provisioner's [backend.Backend]: a provisioning window
// asks it, and it answers from the registrations in a [registry.Registrations] store. It boots
// and answers pending registrations, each once; keeps installed machines
// on their disks; writes each node's generated root password to the
// secret store and its first-boot script and webhook token to the state
// folder; and keeps the event log. Safe for concurrent use.
type Backend struct {
	cfg    Config
	log    *slog.Logger
	dir    string
	events events.Store

	// installed is when each node's installer reported success, kept in
	// memory so that the status page reads no event log.
	installedMu sync.Mutex
	installed   map[string]backend.Event

	// allow is what Allow answers from; allowMu serializes its loads.
	allow   atomic.Pointer[allowList]
	allowMu sync.Mutex
	// allowSince is when the read running in the background began (Unix
	// nanoseconds), 0 while none runs: one value, so [Backend.Allow] never
	// sees a read running with the start of an earlier one.
	allowSince atomic.Int64

	// views shares reads of the pending registrations between the
	// script and answer requests (view.go).
	views views
}

var (
	_ backend.Backend   = (*Backend)(nil)
	_ backend.Recorder  = (*Backend)(nil)
	_ backend.Inventory = (*Backend)(nil)
	_ backend.OneShot   = (*Backend)(nil)
	_ backend.Starter   = (*Backend)(nil)
	_ events.Sink       = (*Backend)(nil)
)

// New checks cfg, creates the first-boot folder (0700), checks that it
// and the state folder are writable and reads the installed nodes from
// the event store. It changes nothing else: the clean-up after
// a killed window is [Backend.Start]'s. Close it when done.
func New(cfg Config) (*Backend, error) {
	if cfg.Store == nil || cfg.Secrets == nil || cfg.StateDir == "" || cfg.Events == nil {
		return nil, errors.New("registry backend: a store, a secret store, a state folder and an event store are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Site == nil {
		cfg.Site = func() (registry.Site, error) { return registry.Site{}, nil }
	}
	if cfg.AllowRefresh <= 0 {
		cfg.AllowRefresh = DefaultAllowRefresh
	}
	if cfg.AllowMaxAge <= 0 {
		cfg.AllowMaxAge = DefaultAllowMaxAge
	}
	cfg.AllowMaxAge = max(cfg.AllowMaxAge, 2*cfg.AllowRefresh)
	b := &Backend{cfg: cfg, log: cfg.Logger, dir: filepath.Join(cfg.StateDir, FirstBootDirName)}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(b.dir, 0o700); err != nil {
		return nil, fmt.Errorf("registry backend: %w", err)
	}
	for _, f := range []struct{ what, dir string }{{"first-boot", b.dir}, {"state", cfg.StateDir}} {
		if err := atomicfile.Probe(f.dir); err != nil {
			return nil, fmt.Errorf("registry backend: the %s folder %s: %w", f.what, f.dir, err)
		}
	}
	b.events = cfg.Events
	ctx, cancel := context.WithTimeout(context.Background(), storeCallTimeout)
	defer cancel()
	hist, err := b.History(ctx)
	if err != nil {
		return nil, fmt.Errorf("registry backend: %w", err)
	}
	b.installed = installedOf(hist)
	return b, nil
}

// Start cleans up after a window that was killed: it removes the
// first-boot files a killed window staged, then runs [Config].Recover
// (the state folder's stores check their folders, remove the secrets
// staged and re-arm the registrations whose answers never left). A
// window calls it once when it opens, under its state folder's lock
// ([backend.Starter]), so no other window is between the steps of an
// answer meanwhile.
func (b *Backend) Start(ctx context.Context) error {
	// Temporary files of answers a killed window staged are of no use.
	if err := atomicfile.CleanTemp(b.dir); err != nil {
		b.log.Warn("cannot remove stale temporary files", "dir", b.dir, "err", err)
	}
	if b.cfg.Recover == nil {
		return nil
	}
	if err := b.cfg.Recover(ctx); err != nil {
		return fmt.Errorf("registry backend: %w", err)
	}
	return nil
}

// ErrNotWritable is wrapped by [New]'s and [Backend.Start]'s error for a
// folder an answer's files are written to but cannot be (read-only,
// full, no permission): a window that starts anyway would take
// registrations it cannot answer.
var ErrNotWritable = atomicfile.ErrNotWritable

// Close releases the backend. It holds nothing of its own (the event
// store is its caller's), so it returns nil; a window closes it with
// itself.
func (b *Backend) Close() error { return nil }

// Boot chooses what the machine with this MAC boots, with the rules of
// [registry.Match] and one more that keeps installed nodes installed:
//
//  1. a pending registration that pins the MAC is installed;
//  2. else a consumed registration that pinned the MAC, or whose
//     installer posted it, makes the machine exit to its next boot
//     device (unless a registration of the same name is pending again);
//  3. else the only pending registration, if it pins nothing, is
//     installed;
//  4. else the machine exits.
//
// A registration whose boot disk is "ask" boots with AskDisk set.
//
// A machine that a registration pins is looked up in a shared read of
// the registrations ([Backend.byPin]); the others read them afresh (one
// read shared by the requests that wait for it).
func (b *Backend) Boot(ctx context.Context, mac string) (backend.Boot, error) {
	arrived := time.Now()
	if m, ok := b.byPin(ctx, []string{mac}, "", ""); ok {
		if len(m.names) > 1 {
			return backend.Boot{Reason: ambiguous(m.names, m.candidates).Error()}, nil
		}
		return backend.Boot{Node: m.reg.Name, Reason: "matched by " + string(m.reason), AskDisk: m.reg.BootDisk.Kind == answer.BootDiskAsk}, nil
	}
	v, err := b.view(ctx, arrived)
	if err != nil {
		return backend.Boot{}, err
	}
	pending, broken := v.pending, v.broken
	reg, reason, matchErr := registry.Match(pending, []string{mac}, "", "")
	if matchErr == nil && reason == registry.MatchOnlyPending && len(broken) > 0 {
		matchErr = blockedBy(broken)
	}
	if matchErr != nil || reason != registry.MatchMAC {
		// Rule 2 comes before the only-pending rule: an installed node
		// must not be taken for the next unpinned registration.
		consumed, err := b.cfg.Store.Consumed(ctx)
		if err != nil {
			return backend.Boot{}, err
		}
		if c, ok := consumedBy(consumed, pending, mac); ok {
			at := ""
			if c.Consumed != nil && !c.Consumed.Time.IsZero() {
				at = " at " + c.Consumed.Time.UTC().Format(time.RFC3339)
			}
			return backend.Boot{Reason: fmt.Sprintf("registration %s was consumed%s: installed or installing; register it again to reinstall", c.Name, at)}, nil
		}
	}
	if errors.Is(matchErr, errBlocked) {
		return backend.Boot{Reason: matchErr.Error()}, nil
	}
	if names := registry.MatchingAll(pending, []string{mac}, "", ""); len(names) > 1 {
		return backend.Boot{Reason: ambiguous(names, pending).Error()}, nil
	}
	if matchErr != nil {
		return backend.Boot{Reason: "no pending registration matches MAC " + mac, Stranger: true}, nil
	}
	return backend.Boot{Node: reg.Name, Reason: "matched by " + string(reason), AskDisk: reg.BootDisk.Kind == answer.BootDiskAsk}, nil
}

// consumedBy finds the consumed registration that pinned mac or whose
// installer posted it, skipping names that are pending again.
func consumedBy(consumed, pending []registry.Registration, mac string) (registry.Registration, bool) {
	for _, c := range consumed {
		if slices.ContainsFunc(pending, func(p registry.Registration) bool { return p.Name == c.Name }) {
			continue
		}
		if slices.Contains(c.KnownMACs(), mac) {
			return c, true
		}
	}
	return registry.Registration{}, false
}

// errBlocked is wrapped by [blockedBy]'s error.
var errBlocked = errors.New("registrations that cannot be read block matching by elimination")

// blockedBy says which unreadable registrations keep a machine from the
// only pending registration: either may be meant for it.
func blockedBy(broken []registry.Broken) error {
	var files []string
	for _, b := range broken {
		files = append(files, b.Error())
	}
	return fmt.Errorf("%w: %s; fix or remove them, or pin the registration to the machine", errBlocked, strings.Join(files, "; "))
}

// errAmbiguous is wrapped by [ambiguous]'s error.
var errAmbiguous = errors.New("several pending registrations pin this machine")

// ambiguous says which registrations pin the machine, and the pins they
// share, rather than picking one.
func ambiguous(names []string, pending []registry.Registration) error {
	var shared []string
	for _, c := range registry.Collisions(pending) {
		shared = append(shared, c.String())
	}
	detail := ""
	if len(shared) > 0 {
		detail = " (" + strings.Join(shared, "; ") + ")"
	}
	return fmt.Errorf("%w: %s%s; remove the pin from all but one", errAmbiguous, strings.Join(names, " and "), detail)
}

var bootDiskParamRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// errNoMatch is the refusal of a machine no pending registration
// matches; its words are what the installer shows.
var errNoMatch = &backend.Refusal{Status: 404, Reason: "no pending registration matches this machine"}

// Answer matches the request to a pending registration ([registry.Match]) and
// builds its answer with a new root password, changing nothing. Its
// Claim, which the window calls once the answer rendered, stages the
// password and the one-shot first-boot files, consumes the registration
// (the point of no return: one request among any number wins) and puts
// the files in place, so that a registration is answered once and its
// files are written by the request that consumed it alone. Delivered
// marks it delivered.
func (b *Backend) Answer(ctx context.Context, req backend.AnswerRequest) (*backend.Answer, error) {
	si := req.Info
	macs, serial, uuid := si.MACs(), si.Serial(), si.UUID()
	var override answer.BootDisk
	if req.BootDisk != "" {
		bd, err := registry.ParseBootDisk(req.BootDisk)
		if !bootDiskParamRE.MatchString(req.BootDisk) || err != nil || bd.Kind == answer.BootDiskAsk {
			return nil, &backend.Refusal{Status: 400, Reason: "invalid bootdisk parameter: want a disk name such as sda or nvme0n1, or a serial"}
		}
		override = bd
	}
	reg, reason, err := b.answerMatch(ctx, macs, serial, uuid)
	if err != nil {
		return nil, err
	}
	if err := registry.SameMachine(reg, macs, serial); err != nil {
		return nil, &backend.Refusal{Status: 409, Node: reg.Name,
			Reason: err.Error() + " (unregister " + reg.Name + " and boot the machine in a discovery window again, or register it by hand)"}
	}
	if reg.BootDisk.Kind == answer.BootDiskAsk && override.Kind == answer.BootDiskAsk {
		return nil, &backend.Refusal{Status: 409, Node: reg.Name,
			Reason: "registration expects a console-chosen boot disk (re-enable provisioning and reboot the node)"}
	}
	if override != (answer.BootDisk{}) {
		// The console's disk must not be one its data pools keep.
		chosen := reg
		chosen.BootDisk = override
		if err := chosen.Validate(); err != nil {
			return nil, &backend.Refusal{Status: 409, Node: reg.Name, Reason: "the console-chosen boot disk " + req.BootDisk + " is refused: " + err.Error()}
		}
	}
	site, err := b.cfg.Site()
	if err != nil {
		return nil, fmt.Errorf("read site settings: %w", err)
	}
	a, files, pw, err := b.build(req, reg, site, override)
	if err != nil {
		return nil, fmt.Errorf("build the answer of %s: %w", reg.Name, err)
	}
	return b.answerOf(req, reg, a, files, pw, fmt.Sprintf("matched by %s; installer %s", reason, req.Version)), nil
}

// answerOf is the [backend.Answer] of reg's built answer a: its Claim
// consumes reg ([Backend.consume]), its Delivered reports the claimed
// answer delivered or not.
func (b *Backend) answerOf(req backend.AnswerRequest, reg registry.Registration, a *answer.Answer, files map[string][]byte, pw, detail string) *backend.Answer {
	var claimed atomic.Bool
	return &backend.Answer{Node: reg.Name, Answer: a, Header: registry.Header(reg, a.Global.FQDN.Name, req.Version, b.cfg.Now()), Detail: detail,
		Claim: func(ctx context.Context) error {
			if err := b.consume(ctx, req, reg, pw, files); err != nil {
				return err
			}
			claimed.Store(true)
			return nil
		},
		Delivered: func(err error) {
			if claimed.Load() {
				b.delivered(reg.Name, err)
			}
		}}
}

// consume stages an answer's files, consumes its registration and puts
// the files in place; a failure after the consumption restores the
// registration.
func (b *Backend) consume(ctx context.Context, req backend.AnswerRequest, reg registry.Registration, pw string, files map[string][]byte) error {
	si := req.Info
	macs, serial, uuid := si.MACs(), si.Serial(), si.UUID()
	staged, err := b.stage(ctx, reg.Name, pw, files)
	if err != nil {
		return fmt.Errorf("stage the answer of %s: %w", reg.Name, err)
	}
	// The claim is the point of no return, and the last step that can
	// fail but for renames; a failure after it restores the registration.
	rec := registry.ConsumeRecord{Time: b.cfg.Now(), ClientIP: req.ClientIP, MACs: macs, Serial: serial, UUID: uuid, Undelivered: true}
	if _, err := b.cfg.Store.Consume(ctx, reg.Name, rec); err != nil {
		staged.discard()
		if errors.Is(err, registry.ErrAlreadyConsumed) || errors.Is(err, registry.ErrNotFound) {
			return errNoMatch
		}
		return fmt.Errorf("consume registration %s: %w", reg.Name, err)
	}
	// The registration is consumed: its password is kept even if the
	// request ends now, or the node installs with a password nobody has.
	if err := staged.commit(context.WithoutCancel(ctx), b.dir); err != nil {
		b.forgetView()
		if rerr := b.cfg.Store.Rearm(context.WithoutCancel(ctx), reg.Name, registry.RearmOptions{Force: true, WipeData: reg.WipeData}); rerr != nil {
			b.log.Error("cannot restore a registration after a failed answer; re-arm it", "node", reg.Name, "err", rerr)
		}
		return fmt.Errorf("write the answer files of %s: %w", reg.Name, err)
	}
	return nil
}

// storeCallTimeout bounds the store calls the backend makes for no one
// request: its history read as it is built, the allow list shared by
// every request, and the delivered mark after a response.
const storeCallTimeout = 30 * time.Second

// delivered records whether a consumed registration's answer reached its
// installer: one that did not stays undelivered, to be re-armed.
func (b *Backend) delivered(name string, err error) {
	if err != nil {
		b.log.Warn("answer not delivered: the registration stays consumed and undelivered; re-arm it to answer again", "node", name, "err", err)
		return
	}
	// After the response: no request's context is left to bound it.
	ctx, cancel := context.WithTimeout(context.Background(), storeCallTimeout)
	defer cancel()
	if err := b.cfg.Store.MarkDelivered(ctx, name); err != nil {
		b.log.Error("cannot record a delivered answer", "node", name, "err", err)
	}
}

// build builds a node's answer with a new password. It returns the
// answer, the one-shot files to write once the registration is consumed
// (first-boot script and webhook token, by file name), and the plain
// password for the secret store.
func (b *Backend) build(req backend.AnswerRequest, reg registry.Registration, site registry.Site, override answer.BootDisk) (*answer.Answer, map[string][]byte, string, error) {
	pw, err := secret.GeneratePassword()
	if err != nil {
		return nil, nil, "", err
	}
	// SHA-512 crypt's default 5000 rounds, as the installer's chpasswd
	// and openssl passwd -6 hash a password.
	hash, err := answer.HashPassword(pw)
	if err != nil {
		return nil, nil, "", err
	}
	o := registry.BuildOptions{Site: site, BootDisk: override, RootPassword: pw, RootPasswordHash: hash, Installer: req.Version}
	if !req.Version.AtLeast(answer.Version91) && (len(reg.NICNames) > 0 || site.PinNICNames) {
		b.log.Warn("NIC names not pinned: the installer has no interface-name-pinning before 9.1; it names the NICs itself", "node", reg.Name, "installer", req.Version.String())
	}
	files := map[string][]byte{}
	if req.Version.AtLeast(answer.Version83) && req.BaseURL != "" {
		base := strings.TrimSuffix(req.BaseURL, "/")
		rep, err := newToken()
		if err != nil {
			return nil, nil, "", err
		}
		script, err := registry.FirstBootScript(reg, base+"/first-boot-report/"+rep, req.CertPin)
		if err != nil {
			return nil, nil, "", err
		}
		fb, err := newToken()
		if err != nil {
			return nil, nil, "", err
		}
		hook, err := newToken()
		if err != nil {
			return nil, nil, "", err
		}
		files[fb+".sh"] = script
		files[rep+".report"] = []byte(reg.Name + "\n")
		o.FirstBootURL = base + "/first-boot/" + fb
		o.WebhookURL = base + "/webhook/" + hook
		o.CertFingerprint = req.CertFingerprint
		var auth string
		if req.Version.AtLeast(answer.Version92) {
			// The installer sends it back in the report: Installed
			// compares it.
			if auth, err = newToken(); err != nil {
				return nil, nil, "", err
			}
			o.WebhookAuthToken = auth
		}
		files[hook+".webhook"] = webhookFile(reg.Name, auth)
	}
	a, err := registry.Build(reg, o)
	if err != nil {
		return nil, nil, "", err
	}
	if len(a.Global.RootSSHKeys) == 0 {
		b.log.Warn("answer carries no SSH key: day-2 access to the node is by key; give the site SSH keys", "node", reg.Name)
	}
	return a, files, pw, nil
}

// maxOneShot bounds a first-boot script or webhook token file read.
const maxOneShot = 1 << 20

var tokenRE = regexp.MustCompile(`^[A-Za-z0-9_-]{22,64}$`)

func newToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// claim renames a one-shot file to its .served name and returns its
// content; a second claim finds nothing. Only one of concurrent claims
// wins the rename.
func (b *Backend) claim(token, ext string) ([]byte, bool) {
	if !tokenRE.MatchString(token) {
		return nil, false
	}
	src := filepath.Join(b.dir, token+ext)
	dst := src + ".served"
	if err := os.Rename(src, dst); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			b.log.Error("cannot claim one-shot file", "err", err)
		}
		return nil, false
	}
	data, err := regularfile.Read(dst, maxOneShot)
	if err != nil {
		return nil, false
	}
	return data, true
}

// FirstBoot returns the first-boot script of token, once.
func (b *Backend) FirstBoot(_ context.Context, token, _ string) ([]byte, error) {
	script, ok := b.claim(token, ".sh")
	if !ok {
		return nil, fmt.Errorf("%w: unknown or already served first-boot token", backend.ErrNoAnswer)
	}
	return script, nil
}

// Record appends e to the event log.
func (b *Backend) Record(ctx context.Context, e backend.Event) error {
	return b.Append(ctx, e)
}

// Append appends evs to the event log in one append of its store (an
// [events.Sink]: the window's writer hands the backend its events in
// batches), noting the installed nodes.
func (b *Backend) Append(ctx context.Context, evs ...backend.Event) error {
	for _, e := range evs {
		if e.Kind == events.Installed && e.Node != "" {
			b.installedMu.Lock()
			b.installed[e.Node] = e
			b.installedMu.Unlock()
		}
	}
	return b.events.Append(ctx, evs...)
}

// History reads the event store.
func (b *Backend) History(ctx context.Context) ([]backend.Event, error) {
	recs, err := b.events.Read(ctx, "", 0)
	if err != nil {
		return nil, err
	}
	evs := make([]backend.Event, len(recs))
	for i, r := range recs {
		evs[i] = r.Event
	}
	return evs, nil
}

// Follow calls fn with each event appended to the event store after
// the event of id (as [events.Store.Follow] takes it), until ctx ends:
// the window follows what other processes record (BMC actions) for its
// page.
func (b *Backend) Follow(ctx context.Context, after string, fn func(events.Record) error) error {
	return b.events.Follow(ctx, after, fn)
}

// FollowKinds is [Backend.Follow] for the events whose kind is one of
// kinds, through the event store's own filter when it has one
// ([events.FollowKinds]).
func (b *Backend) FollowKinds(ctx context.Context, after string, kinds []events.Kind, fn func(events.Record) error) error {
	return events.FollowKinds(ctx, b.events, after, kinds, fn)
}

// Nodes lists the registrations with their states ([Status]).
func (b *Backend) Nodes(ctx context.Context) ([]backend.Node, error) {
	b.installedMu.Lock()
	installed := maps.Clone(b.installed)
	b.installedMu.Unlock()
	return status(ctx, b.cfg.Store, installed, b.cfg.Installs)
}
