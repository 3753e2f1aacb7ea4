package netboot

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/events"
)

// WebhookReadTimeout bounds the time a webhook body may take to arrive
// in full: 60 seconds (a real one is a few KiB, sent at once). Each read
// is bounded too, by the server's body timeout.
const WebhookReadTimeout = 60 * time.Second

// webhook serves POST /webhook/{token}: the installer's report that the
// install is done. The per-node token in the URL is its authentication.
// The body, at most [MaxBodySize] read within Config.WebhookReadTimeout
// ([WebhookReadTimeout] by default), is
// parsed and checked ([answer.ParseInstallReport]) before the token is
// spent: a body over the bound gets 413, one too slow 408, a malformed
// one 400, and none of them consumes the token or keeps anything. A
// spent or unknown token gets 404 and changes nothing. Fields a newer
// minor schema adds are ignored: a refused webhook leaves a real
// installer in its debug shell.
func (h *Handler) webhook(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ev := backend.Event{Kind: events.Installed, ClientIP: hostOf(r.RemoteAddr)}
	if r.Method != http.MethodPost {
		h.methodNotAllowed(w, r, events.Refused, http.MethodPost)
		return
	}
	refuse := func(status int, msg string) {
		ev.Kind, ev.Status, ev.Detail = events.Refused, status, msg
		h.record(ctx, ev)
		h.log.Warn("webhook refused", "status", status, "reason", msg, "client_ip", ev.ClientIP)
		reply(w, status, msg)
	}
	limit := h.cfg.WebhookReadTimeout
	if limit <= 0 {
		limit = WebhookReadTimeout
	}
	report, status, msg := readReport(w, r, limit)
	if status != 0 {
		refuse(status, msg)
		return
	}
	node, err := "", backend.ErrNoAnswer
	if os, ok := h.cfg.Backend.(backend.OneShot); ok {
		node, err = os.Installed(ctx, r.PathValue("token"), ev.ClientIP, report)
	}
	if err != nil {
		if !errors.Is(err, backend.ErrNoAnswer) {
			h.log.Error("webhook failed", "err", err)
			refuse(http.StatusInternalServerError, "webhook failed; see the server log")
			return
		}
		refuse(http.StatusNotFound, "unknown or already used webhook token")
		return
	}
	ev.Node, ev.Status, ev.Detail = node, http.StatusOK, "installer reported success"+reportDetail(report)
	if report.BootMode != "" {
		sb := report.SecureBoot
		ev.BootMode, ev.SecureBoot = report.BootMode, &sb
	}
	h.record(ctx, ev)
	addr := ""
	if m := report.Management; m != nil && m.Address.IsValid() {
		addr = m.Address.String()
	}
	h.log.Info("node installed", "node", node, "boot_mode", report.BootMode, "secure_boot", report.SecureBoot, "address", addr, "host_keys", len(report.HostKeys))
	reply(w, http.StatusOK, "ok")
}

// readReport reads and parses a webhook body; a refusal comes back as a
// status and a message naming the field, quoting nothing.
func readReport(w http.ResponseWriter, r *http.Request, limit time.Duration) (*answer.InstallReport, int, string) {
	body, status, msg := readBody(w, r, "webhook body", limit)
	if status != 0 {
		return nil, status, msg
	}
	report, err := answer.ParseInstallReport(body)
	if err != nil {
		return nil, http.StatusBadRequest, "invalid webhook body: " + strings.TrimPrefix(err.Error(), "parse install report: bad install report: ")
	}
	return report, 0, ""
}

// readBody reads a request's body of at most [MaxBodySize] bytes
// within limit; a refusal comes back as a status and a message that
// starts with what.
func readBody(w http.ResponseWriter, r *http.Request, what string, limit time.Duration) ([]byte, int, string) {
	body, err := io.ReadAll(&deadlineReader{r: http.MaxBytesReader(w, r.Body, MaxBodySize), end: time.Now().Add(limit)})
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, http.StatusRequestEntityTooLarge, fmt.Sprintf("%s over %d bytes", what, MaxBodySize)
	case errors.Is(err, errSlowBody):
		return nil, http.StatusRequestTimeout, fmt.Sprintf("%s not sent within %s", what, limit)
	case err != nil:
		return nil, http.StatusBadRequest, what + " unreadable"
	}
	return body, 0, ""
}

var errSlowBody = errors.New("body too slow")

// deadlineReader fails a read that starts after end.
type deadlineReader struct {
	r   io.Reader
	end time.Time
}

func (d *deadlineReader) Read(p []byte) (int, error) {
	if time.Now().After(d.end) {
		return 0, errSlowBody
	}
	return d.r.Read(p)
}

// reportDetail is " (efi, Secure Boot on)" for the event's detail, or "".
func reportDetail(r *answer.InstallReport) string {
	if r.BootMode == "" {
		return ""
	}
	sb := "off"
	if r.SecureBoot {
		sb = "on"
	}
	return " (" + r.BootMode + ", Secure Boot " + sb + ")"
}
