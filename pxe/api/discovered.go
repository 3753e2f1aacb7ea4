package api

import (
	"net/http"
	"time"

	"github.com/plasmactl/plasma-node/pxe/discovery"
)

// listDiscovered serves GET /api/v1/discovered: the discovery inbox's
// live entries, oldest first; 501 without an inbox.
func (h *Handler) listDiscovered(w http.ResponseWriter, r *http.Request) {
	if h.cfg.Inbox == nil {
		writeError(w, http.StatusNotImplemented, "this server keeps no discovery inbox", "")
		return
	}
	recs, err := h.cfg.Inbox.List(r.Context(), time.Now())
	if err != nil {
		h.internal(w, "list discovered machines", err)
		return
	}
	writeJSON(w, http.StatusOK, append([]discovery.Record{}, recs...))
}
