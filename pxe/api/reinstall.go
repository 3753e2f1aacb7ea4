package api

import (
	"bytes"
	"context"
	"errors"
	"net/http"

	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	"github.com/plasmactl/plasma-node/pxe/window"

	"github.com/plasmactl/plasma-node/pxe/registry"
)

// postReinstall re-arms an installed registration as a new one-shot,
// keeping its data pools unless the optional body's wipe_data
// ([ReinstallRequest]), and, when it has a BMC, boots its machine into
// the installer (regbackend.Reinstall). A registration that is not one
// to install (a data-pool disk the boot disk's filter would also match)
// is refused with 422, before anything is written. A registration with a BMC is refused while the
// window is closed, before anything is written: its boot would be
// refused and leave it armed with no one booting it.
func (h *Handler) postReinstall(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := registry.ValidateName(name); err != nil {
		writeError(w, http.StatusBadRequest, err.Error(), "name")
		return
	}
	if h.cfg.Secrets == nil {
		writeError(w, http.StatusNotImplemented, "this server keeps no node secrets", "")
		return
	}
	var req ReinstallRequest
	if body, ok := readBody(w, r); !ok || (len(bytes.TrimSpace(body)) > 0 && !decodeStrict(w, body, &req)) {
		return
	}
	reply := ReinstallReply{Name: name}
	var boot *regbackend.Booter
	if h.cfg.Power != nil {
		boot = &regbackend.Booter{
			WindowOpen: func(ctx context.Context) (bool, error) {
				st, err := h.windowStatus(ctx)
				return st.Open, err
			},
			Boot: func(ctx context.Context, name string) error {
				res, err := h.cfg.Power.Boot(ctx, name)
				reply.Boot = &res
				return err
			},
		}
	}
	_, err := regbackend.Reinstall(r.Context(), h.cfg.Registry, h.cfg.Secrets, name, regbackend.ReinstallOptions{WipeData: req.WipeData, Boot: boot})
	var failed *regbackend.BootFailedError
	if err == nil || errors.As(err, &failed) {
		h.log.Info("api: reinstall", "node", name, "token", tokenOf(r).Name, "client_ip", clientIP(r))
	}
	switch {
	case errors.Is(err, registry.ErrNotFound):
		writeError(w, http.StatusNotFound, err.Error(), "name")
		return
	case errors.Is(err, registry.ErrInvalidRegistration):
		writeError(w, http.StatusUnprocessableEntity, err.Error(), "name")
		return
	case errors.Is(err, window.ErrClosed):
		writeError(w, http.StatusConflict, "reinstall "+name+": the provisioning window is closed; open it first, so that the machine its BMC boots is answered", "")
		return
	case failed != nil:
		h.powerError(w, "reinstall", err)
		return
	case err != nil:
		h.internal(w, "reinstall", err)
		return
	}
	writeJSON(w, http.StatusOK, reply)
}
