package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/window"
)

func (h *Handler) windowStatus(ctx context.Context) (WindowStatus, error) {
	if h.cfg.Windows != nil {
		return h.cfg.Windows.Status(ctx)
	}
	return registrar.WindowStatus(ctx, h.cfg.Window, time.Now())
}

func (h *Handler) getWindow(w http.ResponseWriter, r *http.Request) {
	st, err := h.windowStatus(r.Context())
	if err != nil {
		h.internal(w, "window status", err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (h *Handler) openWindow(w http.ResponseWriter, r *http.Request) {
	var req OpenWindowRequest
	if !readJSON(w, r, &req) {
		return
	}
	ttl, err := time.ParseDuration(req.TTL)
	if err == nil {
		err = window.CheckTTL(ttl)
	}
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, fmt.Sprintf("ttl %q: %s", req.TTL, window.TTLRule), "ttl")
		return
	}
	if h.cfg.Windows == nil {
		writeError(w, http.StatusServiceUnavailable, "this server does not run windows", "")
		return
	}
	st, err := h.cfg.Windows.Open(r.Context(), ttl, WindowOptions{SecureBoot: req.SecureBoot, Discover: req.Discover})
	switch {
	case errors.Is(err, window.ErrOpen), errors.Is(err, ErrConflict):
		writeError(w, http.StatusConflict, err.Error(), "")
		return
	case errors.Is(err, ErrBadRequest):
		writeError(w, http.StatusBadRequest, err.Error(), "")
		return
	case errors.Is(err, ErrNotStarted):
		h.log.Error("api: the window did not open", "err", err)
		writeError(w, http.StatusServiceUnavailable, err.Error(), "")
		return
	case err != nil:
		h.internal(w, "open the window", err)
		return
	}
	h.log.Info("api: window opened", "ttl", ttl.String(), "secure_boot", req.SecureBoot, "discover", req.Discover, "token", tokenOf(r).Name, "client_ip", clientIP(r))
	writeJSON(w, http.StatusCreated, st)
}

func (h *Handler) closeWindow(w http.ResponseWriter, r *http.Request) {
	if h.cfg.Windows == nil {
		writeError(w, http.StatusServiceUnavailable, "this server does not run windows", "")
		return
	}
	closed, err := h.cfg.Windows.Close(r.Context())
	if err != nil {
		h.internal(w, "close the window", err)
		return
	}
	if closed {
		h.log.Info("api: window closed", "token", tokenOf(r).Name, "client_ip", clientIP(r))
	}
	w.WriteHeader(http.StatusNoContent)
}
