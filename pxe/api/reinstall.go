package api

import (
	"errors"
	"fmt"
	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	"net/http"
	"slices"

	"github.com/plasmactl/plasma-node/pxe/registry"
)

// postReinstall re-arms an installed registration as a new one-shot
// (regbackend.Reinstall) and, when it has a BMC, boots its machine into
// the installer. A registration with a BMC is refused while the window
// is closed, before anything is written: its boot would be refused and
// leave it armed with no one booting it.
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
	consumed, err := h.cfg.Registry.Consumed(r.Context())
	if err != nil {
		h.internal(w, "reinstall", err)
		return
	}
	i := slices.IndexFunc(consumed, func(c registry.Registration) bool { return c.Name == name })
	if i < 0 {
		writeError(w, http.StatusNotFound, "reinstall "+name+": no installed or consumed registration of that name", "name")
		return
	}
	withBMC := consumed[i].BMC != nil && h.cfg.Power != nil
	if withBMC {
		st, err := h.windowStatus(r.Context())
		if err != nil {
			h.internal(w, "reinstall", err)
			return
		}
		if !st.Open {
			writeError(w, http.StatusConflict, "reinstall "+name+": the provisioning window is closed; open it first, so that the machine its BMC boots is answered", "")
			return
		}
	}
	if _, err := regbackend.Reinstall(r.Context(), h.cfg.Registry, h.cfg.Secrets, name); err != nil {
		if errors.Is(err, registry.ErrNotFound) {
			writeError(w, http.StatusNotFound, err.Error(), "name")
			return
		}
		h.internal(w, "reinstall", err)
		return
	}
	h.log.Info("api: reinstall", "node", name, "token", tokenOf(r).Name, "client_ip", clientIP(r))
	reply := ReinstallReply{Name: name}
	if withBMC {
		res, err := h.cfg.Power.Boot(r.Context(), name)
		if err != nil {
			h.powerError(w, "reinstall", fmt.Errorf("reinstall %s: re-armed, but its BMC's boot failed (boot it when that is fixed): %w", name, err))
			return
		}
		reply.Boot = &res
	}
	writeJSON(w, http.StatusOK, reply)
}
