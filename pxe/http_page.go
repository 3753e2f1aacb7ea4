package pxe

import (
	"bytes"
	"html/template"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/answer"
)

// pageTemplate is the status page. html/template escapes every value, and
// event details may hold text a client sent.
var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"when": when,
	"join": func(s []string) string { return strings.Join(s, ", ") },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="refresh" content="10">
<title>plasma-node provisioning</title>
<style>
body{font-family:sans-serif;margin:1.5em;max-width:70em}
table{border-collapse:collapse;margin:.5em 0 1em}
td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}
.pending{color:#a60}.consumed{color:#06a}.installed{color:#080}
.events td{font-size:90%}
</style>
</head>
<body>
<h1>plasma-node provisioning</h1>
<p>Window: {{if .Open}}<strong>open</strong>{{with .Left}}, {{.}} left{{end}}{{else}}<strong>closed</strong>{{end}}.</p>
<h2>Nodes</h2>
{{if not .Nodes}}<p>No registrations.</p>{{end}}
{{range .Nodes}}
<h3 id="node-{{.Name}}">{{.Name}} <span class="{{.State}}">{{.State}}</span></h3>
<table>
<tr><th>MACs</th><td>{{with .MACs}}{{join .}}{{else}}none pinned{{end}}</td></tr>
<tr><th>Boot disk</th><td>{{.BootDisk}}</td></tr>
<tr><th>Registered</th><td>{{when .Created}}</td></tr>
{{if .ConsumedAt}}<tr><th>Answered</th><td>{{when .ConsumedAt}}{{with .InstallIP}} to {{.}}{{end}}</td></tr>{{end}}
{{if .InstalledAt}}<tr><th>Installed</th><td>{{when .InstalledAt}}</td></tr>{{end}}
</table>
{{template "events" .Events}}
{{end}}
{{if .Unmatched}}
<h2>Other machines</h2>
<p>Machines that asked but match no registration.</p>
{{range .Unmatched}}<h3>{{.MAC}}</h3>{{template "events" .Events}}{{end}}
{{end}}
{{if .Other}}
<h2>Unattributed events</h2>
{{template "events" .Other}}
{{end}}
</body>
</html>
{{define "events"}}{{if .}}<table class="events">
<tr><th>Time</th><th>Stage</th><th>MAC</th><th>Detail</th></tr>
{{range .}}<tr><td>{{when .Time}}</td><td>{{.Stage}}</td><td>{{.MAC}}</td><td>{{.Detail}}</td></tr>
{{end}}</table>{{else}}<p>No boot events yet.</p>{{end}}{{end}}
`))

type pageNode struct {
	answer.NodeStatus
	Events []BootEvent
}

type pageMachine struct {
	MAC    string
	Events []BootEvent
}

type pageData struct {
	Open      bool
	Left      string
	Nodes     []pageNode
	Unmatched []pageMachine
	Other     []BootEvent
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

func (h *BootHandler) page(w http.ResponseWriter, r *http.Request) {
	h.syncEvents()
	st, err := answer.Status(r.Context(), h.cfg.Registry, h.cfg.StateDir)
	if err != nil {
		h.log.Error("status page failed", "err", err)
		http.Error(w, "cannot read the registrations; see the server log", http.StatusInternalServerError)
		return
	}
	snap := h.cfg.Timeline.Snapshot()
	d := pageData{}
	open, _, left := h.cfg.Metrics.Window()
	d.Open = open
	if open && left != time.Duration(math.MaxInt64) {
		d.Left = left.Truncate(time.Second).String()
	}
	for _, s := range st {
		d.Nodes = append(d.Nodes, pageNode{NodeStatus: s, Events: snap.Nodes[s.Name]})
	}
	for mac, evs := range snap.Unmatched {
		d.Unmatched = append(d.Unmatched, pageMachine{MAC: mac, Events: evs})
	}
	slices.SortFunc(d.Unmatched, func(a, b pageMachine) int { return strings.Compare(a.MAC, b.MAC) })
	d.Other = snap.Other
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, d); err != nil {
		h.log.Error("status page failed", "err", err)
		http.Error(w, "status page failed; see the server log", http.StatusInternalServerError)
		return
	}
	noStore(w, "text/html; charset=utf-8")
	w.Write(buf.Bytes())
}
