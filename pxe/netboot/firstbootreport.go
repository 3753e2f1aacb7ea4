package netboot

import (
	"errors"
	"net/http"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/events"
)

// firstBootReport serves POST /first-boot-report/{token}: what a node's
// first-boot hook did with its data pools ([backend.FirstBootReporter]),
// which becomes an [events.FirstBootReport] event on the node's timeline.
// The token in the URL, good for one report, is its authentication. The
// body is read as the webhook's is (at most [MaxBodySize], within
// Config.WebhookReadTimeout); a body the backend does not read gets 400
// and spends nothing; an unknown or spent token gets 404.
func (h *Handler) firstBootReport(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ev := backend.Event{Kind: events.FirstBootReport, ClientIP: hostOf(r.RemoteAddr)}
	if r.Method != http.MethodPost {
		h.methodNotAllowed(w, r, events.FirstBootReport, http.MethodPost)
		return
	}
	refuse := func(status int, msg string) {
		ev.Status, ev.Detail = status, "first-boot report refused: "+msg
		h.record(ctx, ev)
		h.log.Warn("first-boot report refused", "status", status, "reason", msg, "node", ev.Node, "client_ip", ev.ClientIP)
		reply(w, status, msg)
	}
	limit := h.cfg.WebhookReadTimeout
	if limit <= 0 {
		limit = WebhookReadTimeout
	}
	body, status, msg := readBody(w, r, "body", limit)
	if status != 0 {
		refuse(status, msg)
		return
	}
	node, detail, err := "", "", error(backend.ErrNoAnswer)
	if fr, ok := h.cfg.Backend.(backend.FirstBootReporter); ok {
		node, detail, err = fr.FirstBootReport(ctx, r.PathValue("token"), ev.ClientIP, body)
	}
	var refusal *backend.Refusal
	switch {
	case errors.As(err, &refusal) && refusal.Status >= 400 && refusal.Status < 500:
		ev.Node = refusal.Node
		refuse(refusal.Status, refusal.Reason)
		return
	case errors.Is(err, backend.ErrNoAnswer):
		refuse(http.StatusNotFound, "unknown or already used first-boot report token")
		return
	case err != nil:
		h.log.Error("first-boot report failed", "err", err)
		refuse(http.StatusInternalServerError, "first-boot report failed; see the server log")
		return
	}
	ev.Node, ev.Status, ev.Detail = node, http.StatusOK, detail
	h.record(ctx, ev)
	h.log.Info("first-boot report", "node", node, "pools", detail)
	reply(w, http.StatusOK, "ok")
}
