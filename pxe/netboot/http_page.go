package netboot

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/events"
)

// StatusReport is what GET /status of a [Handler] replies, as JSON: the
// window, every registration with its boot timeline, and the events of
// machines no registration is known for. It holds no secret, and, as
// the window's port serves it, of every MAC, serial, UUID and address
// only the last characters ("…:ee:01"; see [Handler]). Each entry
// of its "nodes" list has the fields of [backend.Node] and the node's
// timeline.
type StatusReport struct {
	// Window is the provisioning window's state.
	Window WindowStatus `json:"window"`
	// Nodes holds every registration, pending ones first, each sorted by
	// name (see [backend.Inventory]).
	Nodes []NodeReport `json:"nodes"`
	// Unmatched holds the events of MAC addresses no node is known for
	// (pinned or reported): masked, by their masked MAC.
	Unmatched map[string][]BootEvent `json:"unmatched"`
	// Other holds events with neither MAC nor node.
	Other []BootEvent `json:"other"`
	// Discovered counts the machines of a discovery window's inbox; nil
	// without discovery.
	Discovered *int `json:"discovered,omitempty"`
	// Inbox holds the first [InboxRows] of them, oldest first, each
	// with the rule and name the site's rules would give it or why none
	// would. Their full records are the API's.
	Inbox []InboxMachine `json:"inbox,omitempty"`
	// Time is when the report was made.
	Time time.Time `json:"time"`
}

// NodeReport is one registration's state and its boot timeline.
type NodeReport struct {
	backend.Node
	// Timeline holds the node's boot events, oldest first.
	Timeline []BootEvent `json:"timeline"`
}

// WindowStatus is the provisioning window's state, as the [Metrics] hold
// it ([Metrics.SetWindow]).
type WindowStatus struct {
	// Open reports whether the window is open.
	Open bool `json:"open"`
	// Deadline is when the window closes; zero when closed or unlimited.
	Deadline time.Time `json:"deadline,omitzero"`
	// LeftSeconds is how long the window has left, in whole seconds; nil
	// when the window is closed or has no limit.
	LeftSeconds *int64 `json:"left_seconds,omitempty"`
}

// maskTail keeps the last keep bytes of s behind "…"; "" stays "".
func maskTail(s string, keep int) string {
	if s == "" {
		return ""
	}
	if len(s) <= keep {
		return "…"
	}
	return "…" + s[len(s)-keep:]
}

// report gathers what GET /status and the page show, in full, and the
// redactor that masks it for the window's port. A machine's events
// filed under a MAC that a registration pins (or its install report
// names) are the node's: they join its timeline, whatever linked the
// MAC or not.
func (h *Handler) report(ctx context.Context) (StatusReport, redactor, error) {
	st, recs, err := h.identified(ctx)
	if err != nil {
		return StatusReport{}, redactor{}, err
	}
	snap := attribute(h.cfg.Timeline.Snapshot(), st)
	rep := StatusReport{Nodes: []NodeReport{}, Unmatched: snap.Unmatched, Other: snap.Other, Time: h.cfg.Now().UTC()}
	open, deadline, left := h.cfg.Metrics.Window()
	rep.Window.Open = open
	if open && left != time.Duration(math.MaxInt64) {
		s := int64(left / time.Second)
		rep.Window.Deadline, rep.Window.LeftSeconds = deadline.UTC(), &s
	}
	if h.cfg.Discovery != nil {
		n := len(recs)
		rep.Discovered, rep.Inbox = &n, h.inbox(ctx, recs)
	}
	for _, s := range st {
		evs := snap.Nodes[s.Name]
		if evs == nil {
			evs = []BootEvent{}
		}
		rep.Nodes = append(rep.Nodes, NodeReport{Node: s, Timeline: evs})
	}
	return rep, newRedactor(st, recs), nil
}

// identified reads what identifies machines, which the redactor masks:
// the backend's nodes (none without an inventory) and the discovery
// inbox (none without discovery).
func (h *Handler) identified(ctx context.Context) ([]backend.Node, []discovery.Record, error) {
	var nodes []backend.Node
	if inv, ok := h.cfg.Backend.(backend.Inventory); ok {
		var err error
		if nodes, err = inv.Nodes(ctx); err != nil {
			return nil, nil, err
		}
	}
	var recs []discovery.Record
	if d := h.cfg.Discovery; d != nil {
		var err error
		if recs, err = d.Inbox.List(ctx, h.cfg.Now()); err != nil {
			return nil, nil, err
		}
	}
	return nodes, recs, nil
}

// attribute moves the unmatched events of every MAC a node pins or
// reported into that node's timeline, naming the node.
func attribute(snap TimelineSnapshot, nodes []backend.Node) TimelineSnapshot {
	for _, n := range nodes {
		macs := n.MACs
		if n.Install != nil {
			macs = append(slices.Clip(macs), n.Install.MACs...)
		}
		moved := false
		for _, m := range macs {
			m, err := normalizeMAC(m)
			if err != nil {
				continue
			}
			evs, ok := snap.Unmatched[m]
			if !ok {
				continue
			}
			delete(snap.Unmatched, m)
			for _, ev := range evs {
				ev.Node = n.Name
				snap.Nodes[n.Name] = append(snap.Nodes[n.Name], ev)
			}
			moved = true
		}
		if moved {
			slices.SortStableFunc(snap.Nodes[n.Name], func(a, b BootEvent) int { return a.Time.Compare(b.Time) })
		}
	}
	return snap
}

// fullReport is GET /status's report in full, for a reader the caller
// has authenticated.
func (h *Handler) fullReport(ctx context.Context) (StatusReport, error) {
	rep, _, err := h.report(ctx)
	return rep, err
}

// maskedReport is GET /status's report as the window's port shows it.
func (h *Handler) maskedReport(ctx context.Context) (StatusReport, error) {
	rep, r, err := h.report(ctx)
	return r.report(rep), err
}

func (h *Handler) status(w http.ResponseWriter, r *http.Request) {
	h.serveStatus(w, r, h.maskedReport)
}

func (h *Handler) serveStatus(w http.ResponseWriter, r *http.Request, report func(context.Context) (StatusReport, error)) {
	rep, err := report(r.Context())
	if err != nil {
		h.log.Error("status failed", "err", err)
		http.Error(w, "cannot read the registrations; see the server log", http.StatusInternalServerError)
		return
	}
	noStore(w, "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(rep)
}

// refreshSeconds is how often the status page reloads its content: by a
// fetch of itself with JavaScript, by a meta refresh without.
const refreshSeconds = 5

// pageSteps are the boot steps the page shows for each node, in order,
// with their labels.
var pageSteps = []struct {
	Stage events.Kind
	Label string
}{
	{events.DHCPOffer, "DHCP offer"}, {events.TFTP, "TFTP"}, {events.Shim, "shim"}, {events.Grub, "grub"}, {events.Script, "iPXE script"}, {events.Kernel, "kernel"},
	{events.Initrd, "initrd"}, {events.Answer, "answer"}, {events.FirstBoot, "first boot"}, {events.Webhook, "webhook"},
}

// pageStyle and pageScript are the page's only style and script, inline
// (the page loads nothing else) and allowed by hash in its
// Content-Security-Policy. They hold no comments: html/template would
// strip them, and the hash would no longer match.
//
// The script reloads the content of #status every refreshSeconds by
// fetching the page itself and swapping the element in (the server
// renders the page, whether the script runs or not), ticks the window's
// countdown every second from its data-left attribute, and says in
// #refresh when the server cannot be reached (the window closed).
const (
	pageStyle = `
body{font-family:system-ui,sans-serif;margin:1.5em;max-width:72em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1em}
td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}
.pending{color:#a60}.consumed{color:#06a}.installed{color:#080}
.events td{font-size:90%}
.steps{list-style:none;display:flex;flex-wrap:wrap;gap:.3em;padding:0;margin:.5em 0}
.steps li{border:1px solid #bbb;border-radius:1em;padding:.1em .7em;color:#888}
.steps li.seen{background:#dfd;border-color:#080;color:#040}
.steps li.failed{background:#fdd;border-color:#b00;color:#700}
#refresh[data-state=error]{color:#b00}
`
	pageScript = `
(function () {
  "use strict";
  var every = 1000 * Number(document.getElementById("refresh").getAttribute("data-every"));
  var deadline = null, refreshes = 0;
  function fmt(s) {
    var h = Math.floor(s / 3600), m = Math.floor(s % 3600 / 60), r = s % 60;
    if (h > 0) { return h + "h" + m + "m" + r + "s"; }
    if (m > 0) { return m + "m" + r + "s"; }
    return r + "s";
  }
  function tick() {
    var el = document.getElementById("window-left");
    if (deadline !== null && el) {
      el.textContent = fmt(Math.max(0, Math.round((deadline - Date.now()) / 1000)));
    }
  }
  function arm() {
    var w = document.getElementById("window");
    var left = w ? w.getAttribute("data-left") : null;
    deadline = left === null ? null : Date.now() + 1000 * Number(left);
    tick();
  }
  function note(state, text) {
    var p = document.getElementById("refresh");
    p.setAttribute("data-state", state);
    document.getElementById("refresh-note").textContent = text;
  }
  function refresh() {
    fetch(location.pathname + location.search, {cache: "no-store", credentials: "same-origin"}).then(function (r) {
      if (!r.ok) { throw new Error("HTTP " + r.status); }
      return r.text();
    }).then(function (text) {
      var next = new DOMParser().parseFromString(text, "text/html").getElementById("status");
      if (!next) { throw new Error("the reply has no status"); }
      document.getElementById("status").replaceWith(document.adoptNode(next));
      refreshes++;
      document.body.setAttribute("data-refreshes", String(refreshes));
      arm();
      note("ok", "");
    }).catch(function (e) {
      note("error", " Cannot reach the server (" + e.message + "): the window may have closed. Retrying.");
    }).then(function () {
      setTimeout(refresh, every);
    });
  }
  arm();
  setInterval(tick, 1000);
  setTimeout(refresh, every);
})();
`
)

// pageCSP is the page's Content-Security-Policy: nothing but its own
// inline style and script, and fetches of this server.
var pageCSP = "default-src 'none'; style-src " + cspHash(pageStyle) + "; script-src " + cspHash(pageScript) +
	"; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// pageTemplate is the status page. html/template escapes every value, and
// event details may hold text a client sent. Stable ids and data-*
// attributes (window, data-left, node-NAME, data-state, data-step,
// data-stage) are there for scripts and tests.
var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"when":  when,
	"rfc":   rfc,
	"join":  func(s []string) string { return strings.Join(s, ", ") },
	"steps": steps,
	"onOff": func(b *bool) string {
		if *b {
			return "on"
		}
		return "off"
	},
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<noscript><meta http-equiv="refresh" content="{{.Refresh}}"></noscript>
<link rel="icon" href="data:,">
<title>plasma-node provisioning</title>
<style>` + pageStyle + `</style>
</head>
<body>
<h1>plasma-node provisioning</h1>
<p id="refresh" data-every="{{.Refresh}}" data-state="ok">This page refreshes every {{.Refresh}} s.<span id="refresh-note"></span></p>
<main id="status">
{{with .Window}}<p id="window" data-open="{{.Open}}"{{with .LeftSeconds}} data-left="{{.}}" data-deadline="{{rfc $.Window.Deadline}}"{{end}}>Window: {{if .Open}}<strong>open</strong>{{if .LeftSeconds}}, <span id="window-left">{{$.Left}}</span> left (closes <time datetime="{{rfc .Deadline}}">{{when .Deadline}}</time>){{else}}, no time limit{{end}}{{else}}<strong>closed</strong>{{end}}.</p>{{end}}
<p id="counts">{{range .Counts}}<span data-count="{{.State}}">{{.N}} {{.State}}</span> {{end}}{{with .Discovered}}<span data-count="discovered">{{.}} discovered</span> {{end}}· updated <time id="updated" datetime="{{rfc .Time}}">{{when .Time}}</time></p>
<h2>Nodes</h2>
{{if not .Nodes}}<p>No registrations.</p>{{end}}
{{range .Nodes}}
<section class="node" id="node-{{.Name}}" data-node="{{.Name}}" data-state="{{.State}}">
<h3>{{.Name}} <span class="{{.State}}">{{.State}}</span></h3>
<ol class="steps">{{range steps .Timeline .InstalledAt}}<li data-step="{{.Stage}}"{{if .Seen}} class="seen{{if .Failed}} failed{{end}}" title="{{when .Time}}: {{.Detail}}"{{end}}>{{.Label}}</li>{{end}}</ol>
<table>
<tr><th>MACs</th><td>{{with .MACs}}{{join .}}{{else}}none pinned{{end}}</td></tr>
<tr><th>Boot disk</th><td>{{.BootDisk}}</td></tr>{{if .BootMethod}}<tr><th>Boot method</th><td data-boot-method="{{.BootMethod}}">{{.BootMethod}}{{with .MediaAnswer}}, answer {{.}}{{end}}</td></tr>{{end}}
{{with .Pools}}<tr><th>Pools</th><td>{{join .}}</td></tr>{{end}}
<tr><th>Registered</th><td>{{when .Created}}</td></tr>
{{if .ConsumedAt}}<tr><th>Answered</th><td>{{when .ConsumedAt}}{{with .InstallIP}} to {{.}}{{end}}</td></tr>{{end}}
{{with .Address}}<tr><th>Address</th><td data-address="{{.}}">{{.}}</td></tr>{{end}}{{with .HostKeyFingerprints}}<tr><th>Host keys</th><td>{{range .}}<code data-host-key="{{.}}">{{.}}</code> {{end}}</td></tr>{{end}}{{if .InstalledAt}}<tr><th>Installed</th><td>{{when .InstalledAt}}{{with .BootMode}} ({{.}}){{end}}</td></tr>{{end}}{{with .SecureBoot}}<tr><th>Secure Boot</th><td data-secure-boot="{{onOff .}}">{{onOff .}}</td></tr>{{end}}
</table>
{{template "events" .Timeline}}
</section>
{{end}}
{{with .Inbox}}
<h2>Discovered machines</h2>
<p>Machines the discovery agent reported, and what the enrolment rules would make of each.</p>
<table class="inbox">
<thead><tr><th>MAC</th><th>Product</th><th>Serial</th><th>Rule</th><th>Name, or why no rule takes it</th></tr></thead>
<tbody>
{{range .}}<tr data-machine="{{.MAC}}"{{with .Rule}} data-rule="{{.}}"{{end}}><td>{{.MAC}}</td><td>{{.Product}}</td><td>{{.Serial}}</td><td>{{.Rule}}</td><td>{{if .Rule}}{{.Name}}{{else}}{{.Reason}}{{end}}</td></tr>
{{end}}</tbody></table>
{{with $.InboxMore}}<p id="inbox-more">and {{.}} more (the first {{$.InboxRows}} are listed).</p>{{end}}
{{end -}}
{{if .Unmatched}}
<h2>Other machines</h2>
<p>Machines that asked but match no registration.</p>
{{range .Unmatched}}<section class="machine" data-mac="{{.MAC}}"><h3>{{.MAC}}</h3>{{template "events" .Events}}</section>{{end}}
{{end}}
{{if .Other}}
<h2>Unattributed events</h2>
{{template "events" .Other}}
{{end}}
</main>
<script>` + pageScript + `</script>
</body>
</html>
{{define "events"}}{{if .}}<table class="events">
<thead><tr><th>Time</th><th>Stage</th><th>MAC</th><th>Detail</th></tr></thead>
<tbody>
{{range .}}<tr data-stage="{{.Stage}}"><td><time datetime="{{rfc .Time}}">{{when .Time}}</time></td><td>{{.Stage}}</td><td>{{.MAC}}</td><td>{{.Detail}}</td></tr>
{{end}}</tbody></table>{{else}}<p>No boot events yet.</p>{{end}}{{end}}
`))

type pageMachine struct {
	MAC    string
	Events []BootEvent
}

type pageCount struct {
	State string
	N     int
}

type pageData struct {
	StatusReport
	Refresh   int
	Left      string
	Counts    []pageCount
	Unmatched []pageMachine
	// InboxMore is how many discovered machines the page does not list.
	InboxMore int
	InboxRows int
}

type pageStep struct {
	Stage  events.Kind
	Label  string
	Seen   bool
	Failed bool
	Time   time.Time
	Detail string
}

// steps says which of pageSteps a timeline reached, each with its latest
// event, and whether that event was a refusal. Once the node is installed
// (installed is set), a refusal after that time of a step it had reached
// (a replayed one-shot first-boot URL, a reboot's exit script) leaves the
// step as it was: it is in the node's events, not a failed step.
//
// The Secure Boot chain's steps (shim, grub) are shown only for a node
// that took them.
func steps(evs []BootEvent, installed *time.Time) []pageStep {
	out := make([]pageStep, 0, len(pageSteps))
	chain := slices.ContainsFunc(evs, func(ev BootEvent) bool { return ev.Stage == events.Shim || ev.Stage == events.Grub })
	for _, s := range pageSteps {
		if !chain && (s.Stage == events.Shim || s.Stage == events.Grub) {
			continue
		}
		st := pageStep{Stage: s.Stage, Label: s.Label}
		if chain && s.Stage == events.Script {
			st.Label = "grub entry"
		}
		for _, ev := range evs {
			if installed != nil && st.Seen && !st.Failed && ev.Time.After(*installed) && refusal(ev) {
				continue
			}
			if ev.Stage == s.Stage {
				st.Seen, st.Failed, st.Time, st.Detail = true, refusal(ev), ev.Time, ev.Detail
			}
		}
		out = append(out, st)
	}
	return out
}

// refusal reports whether ev says the step did not go through: an exit
// script, a refused answer or webhook, a first-boot fetch that failed, in
// the words [Handler] and [Timeline.Ingest] record.
func refusal(ev BootEvent) bool {
	switch ev.Stage {
	case events.Script:
		return strings.HasPrefix(ev.Detail, "exit: ") || strings.HasPrefix(ev.Detail, "grub exit: ")
	case events.Answer, events.Webhook:
		return strings.HasPrefix(ev.Detail, "answer refused") || strings.HasPrefix(ev.Detail, "webhook refused")
	case events.FirstBoot:
		return strings.HasPrefix(ev.Detail, "first-boot script (") && !strings.HasPrefix(ev.Detail, "first-boot script (200)")
	}
	return false
}

func when(v any) string {
	const layout = "2006-01-02 15:04:05Z"
	switch t := v.(type) {
	case time.Time:
		return t.UTC().Format(layout)
	case *time.Time:
		if t != nil {
			return t.UTC().Format(layout)
		}
	}
	return ""
}

func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// renderPage renders the page of rep.
func renderPage(rep StatusReport) ([]byte, error) {
	d := pageData{StatusReport: rep, Refresh: refreshSeconds, InboxRows: InboxRows}
	if rep.Discovered != nil {
		d.InboxMore = *rep.Discovered - len(rep.Inbox)
	}
	d.StatusReport.Unmatched = nil
	if l := rep.Window.LeftSeconds; l != nil {
		d.Left = (time.Duration(*l) * time.Second).String()
	}
	for _, state := range []string{backend.StatePending, backend.StateConsumed, backend.StateInstalled} {
		n := 0
		for _, nd := range rep.Nodes {
			if nd.State == state {
				n++
			}
		}
		d.Counts = append(d.Counts, pageCount{State: state, N: n})
	}
	for mac, evs := range rep.Unmatched {
		d.Unmatched = append(d.Unmatched, pageMachine{MAC: mac, Events: evs})
	}
	slices.SortFunc(d.Unmatched, func(a, b pageMachine) int { return strings.Compare(a.MAC, b.MAC) })
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, d); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (h *Handler) page(w http.ResponseWriter, r *http.Request) { h.servePage(w, r, h.maskedReport) }

func (h *Handler) servePage(w http.ResponseWriter, r *http.Request, report func(context.Context) (StatusReport, error)) {
	rep, err := report(r.Context())
	if err != nil {
		h.log.Error("status page failed", "err", err)
		http.Error(w, "cannot read the registrations; see the server log", http.StatusInternalServerError)
		return
	}
	page, err := renderPage(rep)
	if err != nil {
		h.log.Error("status page failed", "err", err)
		http.Error(w, "status page failed; see the server log", http.StatusInternalServerError)
		return
	}
	noStore(w, "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", pageCSP)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Write(page)
}

// FullPage serves the status page with every MAC, serial, UUID and
// address in full, which the window's own GET / masks: mount it only
// behind authentication (the daemon's API, for a read token).
func (h *Handler) FullPage(w http.ResponseWriter, r *http.Request) { h.servePage(w, r, h.fullReport) }

// FullStatus serves GET /status's [StatusReport] in full, as FullPage
// does the page.
func (h *Handler) FullStatus(w http.ResponseWriter, r *http.Request) {
	h.serveStatus(w, r, h.fullReport)
}
