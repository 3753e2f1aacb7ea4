package api

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/plasmactl/plasma-node/pxe/apitoken"
)

// minTokenTTL is the shortest token lifetime the API gives: a second.
const minTokenTTL = time.Second

func (h *Handler) listTokens(w http.ResponseWriter, r *http.Request) {
	toks, err := h.cfg.Tokens.List(r.Context())
	if err != nil {
		h.internal(w, "list tokens", err)
		return
	}
	out := []TokenInfo{}
	for _, t := range toks {
		out = append(out, TokenInfo{Name: t.Name, Scope: string(t.Scope), Created: t.Created, LastUsed: t.LastUsed, Expires: t.Expires})
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *Handler) createToken(w http.ResponseWriter, r *http.Request) {
	var req CreateTokenRequest
	if !readJSON(w, r, &req) {
		return
	}
	scope, err := apitoken.ParseScope(req.Scope)
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, err.Error(), "scope")
		return
	}
	var expires time.Time
	if req.TTL != "" {
		ttl, err := time.ParseDuration(req.TTL)
		if err != nil || ttl < minTokenTTL {
			writeError(w, http.StatusUnprocessableEntity, fmt.Sprintf("ttl %q: want a duration of %s or more, such as 720h, or no ttl for a token that does not expire", req.TTL, minTokenTTL), "ttl")
			return
		}
		expires = time.Now().Add(ttl).Truncate(time.Second)
	}
	tok, err := h.cfg.Tokens.Create(r.Context(), req.Name, scope, expires)
	switch {
	case errors.Is(err, apitoken.ErrExpired):
		writeError(w, http.StatusUnprocessableEntity, err.Error(), "ttl")
		return
	case errors.Is(err, apitoken.ErrInvalidName):
		writeError(w, http.StatusUnprocessableEntity, err.Error(), "name")
		return
	case errors.Is(err, apitoken.ErrExists):
		writeError(w, http.StatusConflict, err.Error(), "name")
		return
	case err != nil:
		h.internal(w, "create token", err)
		return
	}
	h.log.Info("api: token created", "name", req.Name, "scope", string(scope), "by", tokenOf(r).Name, "client_ip", clientIP(r))
	writeJSON(w, http.StatusCreated, CreatedToken{Name: req.Name, Scope: string(scope), Token: tok, Expires: expires.UTC()})
}

func (h *Handler) revokeToken(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	err := h.cfg.Tokens.Revoke(r.Context(), name)
	switch {
	case errors.Is(err, apitoken.ErrNotFound):
		writeError(w, http.StatusNotFound, err.Error(), "name")
	case err != nil:
		h.internal(w, "revoke token", err)
	default:
		h.endStreams(name)
		h.log.Info("api: token revoked", "name", name, "by", tokenOf(r).Name, "client_ip", clientIP(r))
		w.WriteHeader(http.StatusNoContent)
	}
}
