package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/plasmactl/plasma-node/pxe/registry"
)

// Power runs a registered machine's BMC for the API; the daemon
// implements it over package pxe/power, which links the BMC drivers.
// Without one the power and boot endpoints answer 501.
type Power interface {
	// Power runs action (status, on, off or cycle) and returns the power
	// state after it.
	Power(ctx context.Context, name, action string) (string, error)
	// Boot sets the next boot to PXE once and powers the machine on (or
	// cycles it), only while the window is open and the registration
	// pending.
	Boot(ctx context.Context, name string) (BootReply, error)
}

func (h *Handler) powerName(w http.ResponseWriter, r *http.Request) (string, bool) {
	name := r.PathValue("name")
	if err := registry.ValidateName(name); err != nil {
		writeError(w, http.StatusBadRequest, err.Error(), "name")
		return "", false
	}
	if h.cfg.Power == nil {
		writeError(w, http.StatusNotImplemented, "this server has no BMC control", "")
		return "", false
	}
	return name, true
}

// powerError answers err of a Power call.
func (h *Handler) powerError(w http.ResponseWriter, what string, err error) {
	switch {
	case errors.Is(err, registry.ErrNotFound):
		writeError(w, http.StatusNotFound, err.Error(), "name")
	case errors.Is(err, ErrPowerRefused):
		writeError(w, http.StatusConflict, err.Error(), "")
	case errors.Is(err, ErrBMCFailed):
		writeError(w, http.StatusBadGateway, err.Error(), "")
	case errors.Is(err, ErrBadRequest):
		writeError(w, http.StatusBadRequest, err.Error(), "")
	default:
		h.internal(w, what, err)
	}
}

func (h *Handler) getPower(w http.ResponseWriter, r *http.Request) {
	name, ok := h.powerName(w, r)
	if !ok {
		return
	}
	p, err := h.cfg.Power.Power(r.Context(), name, "status")
	if err != nil {
		h.powerError(w, "power status", err)
		return
	}
	writeJSON(w, http.StatusOK, PowerReply{Power: p})
}

func (h *Handler) postPower(w http.ResponseWriter, r *http.Request) {
	name, ok := h.powerName(w, r)
	if !ok {
		return
	}
	var req PowerRequest
	if !readJSON(w, r, &req) {
		return
	}
	switch req.Action {
	case "status", "on", "off", "cycle":
	default:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("action %q: want status, on, off or cycle", req.Action), "action")
		return
	}
	p, err := h.cfg.Power.Power(r.Context(), name, req.Action)
	if err != nil {
		h.powerError(w, "power "+req.Action, err)
		return
	}
	if req.Action != "status" {
		h.log.Info("api: power "+req.Action, "node", name, "token", tokenOf(r).Name, "client_ip", clientIP(r))
	}
	writeJSON(w, http.StatusOK, PowerReply{Power: p})
}

func (h *Handler) postBoot(w http.ResponseWriter, r *http.Request) {
	name, ok := h.powerName(w, r)
	if !ok {
		return
	}
	res, err := h.cfg.Power.Boot(r.Context(), name)
	if err != nil {
		h.powerError(w, "boot", err)
		return
	}
	h.log.Info("api: boot", "node", name, "protocol", res.Protocol, "cycled", res.Cycled, "token", tokenOf(r).Name, "client_ip", clientIP(r))
	writeJSON(w, http.StatusOK, res)
}
