package netboot

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/events"
)

// Discovery makes a window a discovery window: a machine no
// registration knows ([backend.Boot.Stranger]) boots the release's
// kernel with the discovery initrd ([discovery.InitrdName]), whose agent
// posts its report to POST [discovery.PostPath] with the window's token.
type Discovery struct {
	// Token is the window's token, put on the discovery kernel's command
	// line and required of every post. Required: at least 32 bytes of
	// printable ASCII without space.
	Token string
	// Inbox keeps the reports. Required.
	Inbox discovery.Store
	// Enrol, when set, is called with each report the inbox kept, to
	// enrol the machine by the site's rules (node-provisioner's calls
	// package pxe/enrol's Enroller); what it says is logged and counted
	// in [Metrics]. A report is kept, and its post answered, whatever it
	// says.
	Enrol func(ctx context.Context, rec discovery.Record) Enrolment
	// Preview, when set, says what the rules would make of each machine
	// of recs (the inbox, oldest first), by its ID, storing nothing: the
	// status and its page show it (node-provisioner's previews as
	// `rule test` does). An error is logged and shown as the rules
	// being unreadable; nil shows the machines alone.
	Preview func(ctx context.Context, recs []discovery.Record) (map[string]Enrolment, error)
	// ReadTimeout bounds the time a report may take to arrive in full.
	// Zero: [WebhookReadTimeout].
	ReadTimeout time.Duration
}

// Enrolment is what the enrolment rules made of a discovered machine.
type Enrolment struct {
	// Outcome is [EnrolEnrolled], [EnrolRefused] or [EnrolNoRule].
	Outcome string
	// Rule is the rule that took the machine, empty for none.
	Rule string
	// Node is the registration made, empty for none.
	Node string
	// Install says the rule's mode is install: the machine goes on to
	// install rather than waiting to be booted again (the post is
	// answered [discovery.ReplyInstall]).
	Install bool
	// Reason says why the machine was not enrolled.
	Reason string
}

// Outcomes of an [Enrolment], as /metrics labels them.
const (
	EnrolEnrolled = "enrolled"
	EnrolRefused  = "refused"
	EnrolNoRule   = "no_rule"
)

// minTokenLen is the least length of a window's discovery token.
const minTokenLen = 32

func (d *Discovery) check() error {
	if d.Inbox == nil {
		return errors.New("netboot: discovery needs an inbox")
	}
	if len(d.Token) < minTokenLen || !kernelArgRE.MatchString(d.Token) {
		return fmt.Errorf("netboot: the discovery token must be at least %d bytes of printable ASCII without space", minTokenLen)
	}
	return nil
}

// discoveryScript returns the discovery boot of the stranger s, or
// Reason saying why not.
func (h *Handler) discoveryScript(ctx context.Context, s BootScript) BootScript {
	release, err := h.release(ctx)
	if err == nil {
		err = h.discoveryStaged(release)
	}
	if err != nil {
		s.Reason = fmt.Sprintf("%s; discovery cannot boot it: %v", s.Reason, err)
		return s
	}
	post := s.BaseURL + discovery.PostPath
	args := []string{discovery.ArgURL + "=" + post, discovery.ArgToken + "=" + h.cfg.Discovery.Token, "quiet"}
	s.Discovery, s.Release, s.Reason = true, release, "discovery: "+s.Reason
	s.KernelArgs = strings.Join(append(args, h.cfg.ExtraKernelArgs...), " ")
	return s
}

// discoveryStaged checks that release holds the discovery initrd.
func (h *Handler) discoveryStaged(release string) error {
	root, err := os.OpenRoot(h.cfg.AssetsDir)
	if err != nil {
		return fmt.Errorf("%w: the assets folder is missing (run prepare)", errNoRelease)
	}
	defer root.Close()
	if fi, err := root.Stat(release + "/" + discovery.InitrdName); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("release %s lacks %s (run prepare)", release, discovery.InitrdName)
	}
	return nil
}

// discoveryPost serves POST [discovery.PostPath]: the agent's report.
// The window's token ("Authorization: Bearer <token>", compared in
// constant time) is its authentication: without it the post gets 401.
// The body, at most [discovery.MaxReportBytes] read within the read
// timeout, must be a report [discovery.Decode] takes (else 413, 408 or
// 400); a new machine while the inbox is full gets 503. Each refusal is
// a [events.Refused] event and keeps nothing; a kept report is a
// [events.Discovered] event, answered [discovery.ReplyKept], or
// [discovery.ReplyInstall] when an install-mode rule enrolled the
// machine ([Discovery.Enrol]): its agent reboots it, and its next
// netboot finds the pending registration and is served the install,
// consumed only when the installer asks.
func (h *Handler) discoveryPost(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ev := backend.Event{Kind: events.Discovered, ClientIP: hostOf(r.RemoteAddr)}
	refuse := func(status int, msg string) {
		ev.Kind, ev.Status, ev.Detail = events.Refused, status, "discovery report: "+msg
		h.record(ctx, ev)
		h.log.Warn("discovery report refused", "status", status, "reason", msg, "client_ip", ev.ClientIP)
		reply(w, status, msg)
	}
	d := h.cfg.Discovery
	if d == nil {
		refuse(http.StatusNotFound, "this window does not discover machines")
		return
	}
	if r.Method != http.MethodPost {
		h.methodNotAllowed(w, r, events.Refused, http.MethodPost)
		return
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(d.Token)) != 1 {
		refuse(http.StatusUnauthorized, "missing or wrong discovery token")
		return
	}
	limit := d.ReadTimeout
	if limit <= 0 {
		limit = WebhookReadTimeout
	}
	body := &deadlineReader{r: http.MaxBytesReader(w, r.Body, discovery.MaxReportBytes), end: time.Now().Add(limit)}
	report, err := discovery.Decode(body)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		refuse(http.StatusRequestEntityTooLarge, fmt.Sprintf("report over %d bytes", discovery.MaxReportBytes))
		return
	case errors.Is(err, errSlowBody):
		refuse(http.StatusRequestTimeout, fmt.Sprintf("report not sent within %s", limit))
		return
	case err != nil:
		refuse(http.StatusBadRequest, strings.TrimPrefix(err.Error(), discovery.ErrInvalid.Error()+": "))
		return
	}
	rec, err := d.Inbox.Put(ctx, report, h.cfg.Now())
	switch {
	case errors.Is(err, discovery.ErrFull):
		refuse(http.StatusServiceUnavailable, "the discovery inbox is full")
		return
	case err != nil:
		h.log.Error("discovery report not kept", "err", err)
		refuse(http.StatusInternalServerError, "the report could not be kept; see the server log")
		return
	}
	ev.MAC, ev.Status = rec.ID, http.StatusOK
	// The serial stays out of the event: the timeline shows events to
	// readers the page does not authenticate.
	ev.Detail = fmt.Sprintf("discovered: %d NICs, %d disks", len(rec.NICs), len(rec.Disks))
	h.record(ctx, ev)
	h.log.Info("machine discovered", "mac", rec.ID, "serial", rec.DMI.Serial, "disks", len(rec.Disks))
	say := discovery.ReplyKept
	if d.Enrol != nil {
		en := d.Enrol(ctx, rec)
		h.cfg.Metrics.enrolment(en.Rule, en.Outcome)
		h.log.Info("enrolment", "mac", rec.ID, "outcome", en.Outcome, "rule", en.Rule, "node", en.Node, "install", en.Install, "reason", en.Reason)
		if en.Outcome == EnrolEnrolled && en.Install {
			say = discovery.ReplyInstall
		}
	}
	reply(w, http.StatusOK, say)
}
