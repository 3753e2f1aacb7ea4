package api

import (
	"errors"
	"net/http"

	"github.com/plasmactl/plasma-node/pxe/apitype"
	"github.com/plasmactl/plasma-node/pxe/secret"
)

// siteSecrets answers 501 and false when the server keeps no site
// secrets.
func (h *Handler) siteSecrets(w http.ResponseWriter) bool {
	if h.cfg.SiteSecrets == nil {
		writeError(w, http.StatusNotImplemented, "this server keeps no site secrets", "")
		return false
	}
	return true
}

// listSiteSecrets serves GET /api/v1/secrets: the names of the site
// secrets, never their values.
func (h *Handler) listSiteSecrets(w http.ResponseWriter, r *http.Request) {
	if !h.siteSecrets(w) {
		return
	}
	names, err := h.cfg.SiteSecrets.SiteSecretNames(r.Context())
	if err != nil {
		h.internal(w, "list site secrets", err)
		return
	}
	writeJSON(w, http.StatusOK, apitype.SiteSecrets{Names: append([]string{}, names...)})
}

// setSiteSecret serves PUT /api/v1/secrets/{name}: {"value": "…"}, kept
// as the secret name (write-only: no reply ever holds it). 422 for a bad
// name (field name) or value (field value).
func (h *Handler) setSiteSecret(w http.ResponseWriter, r *http.Request) {
	if !h.siteSecrets(w) {
		return
	}
	var body apitype.SiteSecret
	if !readJSON(w, r, &body) {
		return
	}
	name := r.PathValue("name")
	if !h.siteSecretErr(w, "set a site secret", h.cfg.SiteSecrets.SetSiteSecret(r.Context(), name, body.Value)) {
		return
	}
	h.log.Info("api: site secret set", "secret", name, "by", tokenOf(r).Name, "client_ip", clientIP(r))
	w.WriteHeader(http.StatusNoContent)
}

// removeSiteSecret serves DELETE /api/v1/secrets/{name}; 404 when none
// is kept.
func (h *Handler) removeSiteSecret(w http.ResponseWriter, r *http.Request) {
	if !h.siteSecrets(w) {
		return
	}
	name := r.PathValue("name")
	if !h.siteSecretErr(w, "remove a site secret", h.cfg.SiteSecrets.RemoveSiteSecret(r.Context(), name)) {
		return
	}
	h.log.Info("api: site secret removed", "secret", name, "by", tokenOf(r).Name, "client_ip", clientIP(r))
	w.WriteHeader(http.StatusNoContent)
}

// siteSecretErr writes the refusal of err, false when there is one.
func (h *Handler) siteSecretErr(w http.ResponseWriter, what string, err error) bool {
	switch {
	case err == nil:
		return true
	case errors.Is(err, secret.ErrInvalidName):
		writeError(w, http.StatusUnprocessableEntity, err.Error(), "name")
	case errors.Is(err, secret.ErrInvalidPassword):
		writeError(w, http.StatusUnprocessableEntity, err.Error(), "value")
	case errors.Is(err, secret.ErrNoSiteSecret):
		writeError(w, http.StatusNotFound, err.Error(), "name")
	default:
		h.internal(w, what, err)
	}
	return false
}
