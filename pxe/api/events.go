package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
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

// eventStream is one open event stream, for its token's revocation to
// end it.
type eventStream struct {
	// revoked is set, before the revocation is answered, by
	// [Handler.endStreams]; the stream checks it before each write.
	revoked atomic.Bool
	cancel  context.CancelFunc
}

// takeStream counts an event stream of the token name, unless it holds
// MaxStreamsPerToken already.
func (h *Handler) takeStream(name string, s *eventStream) bool {
	h.streamsMu.Lock()
	defer h.streamsMu.Unlock()
	if h.perToken == nil {
		h.perToken = map[string]map[*eventStream]struct{}{}
	}
	if len(h.perToken[name]) >= h.cfg.MaxStreamsPerToken {
		return false
	}
	if h.perToken[name] == nil {
		h.perToken[name] = map[*eventStream]struct{}{}
	}
	h.perToken[name][s] = struct{}{}
	return true
}

// dropStream uncounts an event stream of the token name.
func (h *Handler) dropStream(name string, s *eventStream) {
	h.streamsMu.Lock()
	defer h.streamsMu.Unlock()
	if delete(h.perToken[name], s); len(h.perToken[name]) == 0 {
		delete(h.perToken, name)
	}
}

// endStreams ends the event streams of the token name, which was just
// revoked: once it returns, none of them writes another event (each
// checks its flag between reading its events and writing them), and
// each closes without waiting for its next check of the token.
func (h *Handler) endStreams(name string) {
	h.streamsMu.Lock()
	defer h.streamsMu.Unlock()
	for s := range h.perToken[name] {
		s.revoked.Store(true)
		s.cancel()
	}
}

// tokenHolds reports whether the stream s of tok may write what it has
// read, and if not why ("" when the stream ends anyway): its token revoked in this process
// ([Handler.endStreams]), or, as the store holds it now, revoked
// elsewhere (another process, another host), expired, or no longer
// allowed to read. It is asked after the events to write were read, so
// an event appended after a revocation, on any host, is never written:
// the store's revocation came before the event, and so before this
// check.
func (h *Handler) tokenHolds(ctx context.Context, s *eventStream, tok apitoken.Token) (bool, string) {
	if s.revoked.Load() {
		return false, "revoked"
	}
	now, err := h.cfg.Tokens.Recheck(ctx, tok)
	if ctx.Err() != nil {
		return false, "" // the stream ends anyway
	}
	if err != nil || !now.Scope.Allows(apitoken.ScopeRead) {
		return false, "revoked"
	}
	if now.Expired(time.Now()) {
		return false, "expired"
	}
	return true, ""
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
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stream := &eventStream{cancel: cancel}
	if !h.takeStream(tok.Name, stream) {
		h.log.Warn("api: event stream refused: the token holds its share open", "client_ip", clientIP(r), "token", tok.Name, "max", h.cfg.MaxStreamsPerToken)
		w.Header().Set("Retry-After", "10")
		writeError(w, http.StatusTooManyRequests, fmt.Sprintf("token %q holds %d event streams open already, its most; close one", tok.Name, h.cfg.MaxStreamsPerToken), "")
		return
	}
	defer h.dropStream(tok.Name, stream)
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
	// end ends the stream when its token no longer holds, saying why.
	end := func(ok bool, why string) bool {
		if ok {
			return false
		}
		if why == "" {
			return true
		}
		h.log.Warn("api: event stream ended: its token was "+why, "client_ip", clientIP(r), "token", tok.Name)
		fmt.Fprintf(w, ": token %s\n\n", why)
		rc.Flush()
		return true
	}
	var batch []events.Record
	for {
		select {
		case <-ctx.Done():
			if stream.revoked.Load() {
				end(false, "revoked")
			}
			return
		case <-recheck.C:
			// A stream lasts: it ends once its token is revoked or
			// expires (or no longer reads), as a new request would be
			// refused.
			if end(h.tokenHolds(ctx, stream, tok)) {
				return
			}
			continue
		case err := <-errc:
			if err != nil && ctx.Err() == nil {
				h.log.Warn("api: event stream: cannot read the event log", "err", err)
			}
			return
		case rec := <-recs:
			// Take what is queued, then check the token, then send it
			// all in one flush: nothing read after a revocation is sent.
			batch = append(batch[:0], rec)
			for more := true; more; {
				select {
				case rec := <-recs:
					batch = append(batch, rec)
				default:
					more = false
				}
			}
			if end(h.tokenHolds(ctx, stream, tok)) {
				return
			}
			for _, rec := range batch {
				data, _ := json.Marshal(rec.Event)
				fmt.Fprintf(w, "id: %s\ndata: %s\n\n", rec.ID, data)
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
