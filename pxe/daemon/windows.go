package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/netboot"
	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// windows runs the site's window on this host; it implements
// [api.Windows]. The window is the site's ([window.SiteStore]): opened
// and closed through any host's API; each host follows it (see follow).
type windows struct {
	ctx      context.Context // the daemon's: windows end with it
	stateDir string
	site     window.SiteStore
	host     window.Host // this host's name and API address
	cfg      pxe.Config
	log      *slog.Logger
	// stores are the daemon's, which each window's backend answers
	// from (withBackend), with siteSettings over site.json's.
	stores       *store.Stores
	siteSettings registry.Site

	mu       sync.Mutex
	cur      *running
	stopping bool        // the daemon stops: records stay
	failed   failure     // the last window that failed to serve here
	outage   bool        // the store could not be read last time
	joined   bool        // the site's window was read once since the start
	advert   window.Host // the last advertisement
}

// failure is a window that did not serve on this host, and when; it is
// tried again after retryFailed.
type failure struct {
	win window.Site
	at  time.Time
}

// running is a window being served.
type running struct {
	srv     *pxe.Server
	cancel  context.CancelFunc
	done    chan struct{}
	err     error
	closing bool // closed (through any host): its record is gone
	win     window.Site
	pw      *window.Record
	said    *said // what it warned of as it started
}

func newWindows(ctx context.Context, stateDir string, site window.SiteStore, host window.Host, cfg pxe.Config, log *slog.Logger) *windows {
	return &windows{ctx: ctx, stateDir: stateDir, site: site, host: host, cfg: cfg, log: log}
}

// Status returns the window: the one serving on this host (the daemon's,
// or another process's on its state folder), else the site's when
// other hosts serve it; with the hosts of the site seen lately.
func (w *windows) Status(ctx context.Context) (api.WindowStatus, error) {
	rec, err := w.site.Read(ctx)
	if err != nil {
		return api.WindowStatus{}, err
	}
	now := time.Now()
	st, err := registrar.WindowStatus(ctx, store.Window(w.stateDir), now)
	if err != nil {
		return st, err
	}
	w.mu.Lock()
	st.Daemon = w.cur != nil && st.Open && st.PID == os.Getpid()
	if st.Daemon {
		st.Warnings = w.cur.said.list()
	}
	w.mu.Unlock()
	if !rec.OpenAt(now) {
		return st, nil
	}
	if !st.Open {
		// Served by the site's other hosts (or starting here).
		st = api.WindowStatus{Open: true, Started: rec.Opened, Deadline: rec.Deadline, SecureBoot: rec.SecureBoot, Discover: rec.Discover}
	}
	st.OpenedBy = rec.By
	hosts, err := w.site.Hosts(ctx, now.Add(-hostsSeen))
	if err != nil {
		return api.WindowStatus{}, err
	}
	st.Hosts = append(st.Hosts, hosts...)
	return st, nil
}

// Open opens the site's window for ttl, with Secure Boot and discovery
// as opts asks, and serves it here: a window open on the site is refused
// ([window.OpenError]); one that cannot serve here is not recorded.
func (w *windows) Open(ctx context.Context, ttl time.Duration, opts api.WindowOptions) (api.WindowStatus, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopping {
		return api.WindowStatus{}, fmt.Errorf("%w: the daemon is stopping", api.ErrConflict)
	}
	now := time.Now().UTC()
	rec := window.Site{Opened: now, Deadline: now.Add(ttl), SecureBoot: opts.SecureBoot, Discover: opts.Discover, By: w.host.Name}
	if err := w.site.Open(ctx, rec); err != nil {
		return api.WindowStatus{}, err
	}
	if r := w.cur; r != nil {
		// A window closed elsewhere that this host has not stopped yet.
		r.closing = true
		r.cancel()
		<-r.done
		w.cur = nil
	}
	st, err := w.startLocked(rec)
	if err != nil {
		if e := w.site.End(context.WithoutCancel(ctx), rec); e != nil {
			w.log.Error("cannot remove the window that did not open; it closes at its deadline", "err", e)
		}
		return st, err
	}
	st.OpenedBy = rec.By
	w.advertiseLocked(ctx, true)
	return st, nil
}

// Close closes the site's window and stops it here (the other hosts
// stop as they learn of it), or closes another process's window on the
// state folder.
func (w *windows) Close(ctx context.Context) (bool, error) {
	open, err := w.site.Close(ctx)
	if err != nil {
		return false, err
	}
	w.mu.Lock()
	r := w.cur
	if r != nil {
		r.closing = true
		r.cancel()
	}
	w.mu.Unlock()
	if r != nil {
		select {
		case <-r.done:
		case <-ctx.Done():
			return true, ctx.Err()
		}
		return true, nil
	}
	if open {
		return true, nil
	}
	return pxe.Disable(ctx, w.stateDir, 0)
}

// shutdown stops the daemon's window, keeping the site's record, and
// tells the site this host no longer serves.
func (w *windows) shutdown() {
	w.mu.Lock()
	w.stopping = true
	r := w.cur
	w.mu.Unlock()
	if r != nil {
		r.cancel()
		<-r.done
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(w.ctx), shutdownGrace)
	defer cancel()
	h := w.host
	h.Seen = time.Now().UTC()
	if err := w.site.Advertise(ctx, h); err != nil {
		w.log.Warn("cannot tell the site this host stops serving", "err", err)
	}
}

var _ api.Pages = (*windows)(nil)

// FullPage serves the status page of the window this daemon runs, in
// full; 503 when it runs none.
func (w *windows) FullPage(rw http.ResponseWriter, r *http.Request) {
	if nb := w.netboot(rw); nb != nil {
		nb.FullPage(rw, r)
	}
}

// FullStatus serves the status report of the window this daemon runs,
// in full; 503 when it runs none.
func (w *windows) FullStatus(rw http.ResponseWriter, r *http.Request) {
	if nb := w.netboot(rw); nb != nil {
		nb.FullStatus(rw, r)
	}
}

// netboot returns the HTTP handler of the window this daemon serves, or
// replies 503 and returns nil.
func (w *windows) netboot(rw http.ResponseWriter) *netboot.Handler {
	w.mu.Lock()
	cur := w.cur
	w.mu.Unlock()
	if cur != nil {
		if nb := cur.srv.Netboot(); nb != nil {
			return nb
		}
	}
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(http.StatusServiceUnavailable)
	json.NewEncoder(rw).Encode(api.Error{Error: "no window serves on this host's daemon now: open one (PUT /api/v1/window), or read the page of the process that serves it"})
	return nil
}
