package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/events"
)

// heartbeat is how often an idle event stream sends a comment, so that
// proxies keep it and a gone client is noticed.
const heartbeat = 15 * time.Second

// tokenRecheck is how often an event stream checks that its token still
// holds.
const tokenRecheck = time.Second

// takeStream counts an event stream of the token name, unless it holds
// MaxStreamsPerToken already.
func (h *Handler) takeStream(name string) bool {
	h.streamsMu.Lock()
	defer h.streamsMu.Unlock()
	if h.perToken == nil {
		h.perToken = map[string]int{}
	}
	if h.perToken[name] >= h.cfg.MaxStreamsPerToken {
		return false
	}
	h.perToken[name]++
	return true
}

// dropStream uncounts an event stream of the token name.
func (h *Handler) dropStream(name string) {
	h.streamsMu.Lock()
	defer h.streamsMu.Unlock()
	if h.perToken[name]--; h.perToken[name] <= 0 {
		delete(h.perToken, name)
	}
}

func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	if n := h.streams.Add(1); n > int64(h.cfg.MaxStreams) {
		h.streams.Add(-1)
		h.log.Warn("api: event stream refused: too many open", "client_ip", clientIP(r), "max", h.cfg.MaxStreams)
		w.Header().Set("Retry-After", "10")
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("%d event streams are open already; try again later", h.cfg.MaxStreams), "")
		return
	}
	defer h.streams.Add(-1)
	tok := tokenOf(r)
	if !h.takeStream(tok.Name) {
		h.log.Warn("api: event stream refused: the token holds its share open", "client_ip", clientIP(r), "token", tok.Name, "max", h.cfg.MaxStreamsPerToken)
		w.Header().Set("Retry-After", "10")
		writeError(w, http.StatusTooManyRequests, fmt.Sprintf("token %q holds %d event streams open already, its most; close one", tok.Name, h.cfg.MaxStreamsPerToken), "")
		return
	}
	defer h.dropStream(tok.Name)
	last := r.Header.Get("Last-Event-ID")
	if q := r.URL.Query().Get("last_event_id"); last == "" && q != "" {
		last = q
	}
	// Check the id before the stream's header is written.
	if _, err := h.cfg.Events.Read(r.Context(), last, 1); errors.Is(err, events.ErrBadID) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("Last-Event-ID %q is not an id this server sent", last), "Last-Event-ID")
		return
	} else if err != nil {
		h.internal(w, "open the event log", err)
		return
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": node-provisioner events\n\n")
	if err := rc.Flush(); err != nil {
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	// Follow delivers the events; the heartbeat runs beside it, and
	// writes are serialised.
	recs := make(chan events.Record)
	errc := make(chan error, 1)
	go func() {
		errc <- h.cfg.Events.Follow(ctx, last, func(rec events.Record) error {
			select {
			case recs <- rec:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	recheck := time.NewTicker(tokenRecheck)
	defer recheck.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-recheck.C:
			// A stream lasts: it ends once its token is revoked or expires (or no
			// longer reads), as a new request would be refused.
			now, err := h.cfg.Tokens.Recheck(ctx, tok)
			if err != nil || !now.Scope.Allows(apitoken.ScopeRead) {
				h.log.Warn("api: event stream ended: its token was revoked", "client_ip", clientIP(r), "token", tok.Name)
				fmt.Fprint(w, ": token revoked\n\n")
				rc.Flush()
				return
			}
			if now.Expired(time.Now()) {
				h.log.Warn("api: event stream ended: its token expired", "client_ip", clientIP(r), "token", tok.Name, "expired", now.Expires)
				fmt.Fprint(w, ": token expired\n\n")
				rc.Flush()
				return
			}
			continue
		case err := <-errc:
			if err != nil && ctx.Err() == nil {
				h.log.Warn("api: event stream: cannot read the event log", "err", err)
			}
			return
		case rec := <-recs:
			data, _ := json.Marshal(rec.Event)
			fmt.Fprintf(w, "id: %s\ndata: %s\n\n", rec.ID, data)
			// Send what is queued at once, in one flush.
			for more := true; more; {
				select {
				case rec := <-recs:
					data, _ := json.Marshal(rec.Event)
					fmt.Fprintf(w, "id: %s\ndata: %s\n\n", rec.ID, data)
				default:
					more = false
				}
			}
			beat.Reset(heartbeat)
		case <-beat.C:
			fmt.Fprint(w, ": ping\n\n")
		}
		rc.SetWriteDeadline(time.Now().Add(heartbeat))
		if err := rc.Flush(); err != nil {
			return
		}
	}
}
