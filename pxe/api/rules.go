package api

import (
	"bytes"
	"errors"
	"net/http"
	"time"

	"github.com/plasmactl/plasma-node/pxe/enrol"
)

// rules answers 501 and false when the server keeps no rules.
func (h *Handler) rules(w http.ResponseWriter) bool {
	if h.cfg.Rules == nil {
		writeError(w, http.StatusNotImplemented, "this server keeps no enrolment rules", "")
		return false
	}
	return true
}

// listRules serves GET /api/v1/rules: the rules by priority and their
// counters.
func (h *Handler) listRules(w http.ResponseWriter, r *http.Request) {
	if !h.rules(w) {
		return
	}
	st, err := h.cfg.Rules.Read(r.Context())
	if err != nil {
		h.internal(w, "read enrolment rules", err)
		return
	}
	writeJSON(w, http.StatusOK, listing(st))
}

// listing is the state as the API shows it: without the holds.
func listing(st enrol.State) enrol.State {
	if st.Rules == nil {
		st.Rules = []enrol.Rule{}
	}
	st.Held = nil
	return st
}

// addRule serves POST /api/v1/rules: one rule, YAML or JSON as `rule
// add` reads it ([enrol.Decode]); ?replace=true replaces the rule of
// its name. 422 for a rule [enrol.Rule.Check] refuses, 409 for a
// priority another rule holds or a name that exists.
func (h *Handler) addRule(w http.ResponseWriter, r *http.Request) {
	if !h.rules(w) {
		return
	}
	rules, ok := h.readRules(w, r)
	if !ok {
		return
	}
	if len(rules) != 1 {
		writeError(w, http.StatusBadRequest, "want one rule; PUT the whole set instead", "")
		return
	}
	st, err := enrol.Add(r.Context(), h.cfg.Rules, h.cfg.Site, rules[0], r.URL.Query().Get("replace") == "true")
	if !h.ruleErr(w, "add an enrolment rule", err) {
		return
	}
	h.log.Info("api: enrolment rule added", "rule", rules[0].Name, "by", tokenOf(r).Name, "client_ip", clientIP(r))
	writeJSON(w, http.StatusCreated, listing(st))
}

// applyRules serves PUT /api/v1/rules: the whole set, {"rules": […]}.
func (h *Handler) applyRules(w http.ResponseWriter, r *http.Request) {
	if !h.rules(w) {
		return
	}
	rules, ok := h.readRules(w, r)
	if !ok {
		return
	}
	st, err := enrol.Apply(r.Context(), h.cfg.Rules, h.cfg.Site, rules)
	if !h.ruleErr(w, "apply enrolment rules", err) {
		return
	}
	h.log.Info("api: enrolment rules applied", "rules", len(rules), "by", tokenOf(r).Name, "client_ip", clientIP(r))
	writeJSON(w, http.StatusOK, listing(st))
}

// removeRule serves DELETE /api/v1/rules/{name}.
func (h *Handler) removeRule(w http.ResponseWriter, r *http.Request) {
	if !h.rules(w) {
		return
	}
	name := r.PathValue("name")
	_, err := enrol.Remove(r.Context(), h.cfg.Rules, name)
	if !h.ruleErr(w, "remove an enrolment rule", err) {
		return
	}
	h.log.Info("api: enrolment rule removed", "rule", name, "by", tokenOf(r).Name, "client_ip", clientIP(r))
	w.WriteHeader(http.StatusNoContent)
}

// previewRules serves GET /api/v1/rules/preview: for each machine of
// the inbox, the rule that would take it and what it would get, or why
// none would ([enrol.PreviewInbox]).
func (h *Handler) previewRules(w http.ResponseWriter, r *http.Request) {
	if !h.rules(w) {
		return
	}
	if h.cfg.Inbox == nil {
		writeError(w, http.StatusNotImplemented, "this server keeps no discovery inbox", "")
		return
	}
	ds, err := enrol.PreviewInbox(r.Context(), h.cfg.Rules, h.cfg.Registry, h.cfg.Inbox, h.cfg.Site, time.Now())
	if err != nil {
		h.internal(w, "preview enrolment rules", err)
		return
	}
	writeJSON(w, http.StatusOK, append([]enrol.Decision{}, ds...))
}

// readRules reads the body's rules; a refusal is written and false
// returned.
func (h *Handler) readRules(w http.ResponseWriter, r *http.Request) ([]enrol.Rule, bool) {
	body, ok := readBody(w, r)
	if !ok {
		return nil, false
	}
	rules, err := enrol.Decode(bytes.NewReader(body))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error(), "")
		return nil, false
	}
	return rules, true
}

// ruleErr writes the refusal of err, false when there is one.
func (h *Handler) ruleErr(w http.ResponseWriter, what string, err error) bool {
	switch {
	case err == nil:
		return true
	case errors.Is(err, enrol.ErrPriorityTaken):
		writeError(w, http.StatusConflict, err.Error(), "priority")
	case errors.Is(err, enrol.ErrExists):
		writeError(w, http.StatusConflict, err.Error(), "name")
	case errors.Is(err, enrol.ErrNotFound):
		writeError(w, http.StatusNotFound, err.Error(), "name")
	case errors.Is(err, enrol.ErrInvalidRule):
		writeError(w, http.StatusUnprocessableEntity, err.Error(), "")
	default:
		h.internal(w, what, err)
	}
	return false
}
