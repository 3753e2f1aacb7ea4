package netboot

import (
	"context"

	"github.com/plasmactl/plasma-node/pxe/discovery"
)

// InboxRows is how many machines of a discovery window's inbox
// [StatusReport] and the page list, oldest first; the page says how
// many more there are.
const InboxRows = 10

// InboxMachine is one machine of a discovery window's inbox as the
// status shows it: what identifies it, and what the site's rules would
// make of it ([Discovery.Preview]), the text `rule test` shows.
type InboxMachine struct {
	// MAC is the entry's ID, its lowest MAC.
	MAC string `json:"mac"`
	// Product and Serial are the machine's DMI product and serial.
	Product string `json:"product,omitempty"`
	Serial  string `json:"serial,omitempty"`
	// Rule is the rule that would take the machine and Name the name it
	// would give it; both empty when none would.
	Rule string `json:"rule,omitempty"`
	Name string `json:"name,omitempty"`
	// Reason says why no rule would take it; empty when one would, or
	// when the window has no rules to preview.
	Reason string `json:"reason,omitempty"`
}

// unreadRules is an inbox row's reason when the rules cannot be
// previewed: the error itself is the server log's.
const unreadRules = "the rules cannot be read; see the server log"

// inbox returns the first [InboxRows] machines of recs, each with what
// the discovery's Preview says of it.
func (h *Handler) inbox(ctx context.Context, recs []discovery.Record) []InboxMachine {
	recs = recs[:min(len(recs), InboxRows)] // only the rows shown are previewed
	var outcomes map[string]Enrolment
	failed := false
	if p := h.cfg.Discovery.Preview; p != nil {
		var err error
		if outcomes, err = p(ctx, recs); err != nil {
			h.log.Error("status: the enrolment rules cannot be previewed", "err", err)
			failed = true
		}
	}
	out := make([]InboxMachine, 0, len(recs))
	for _, r := range recs {
		m := InboxMachine{MAC: r.ID, Product: r.DMI.Product, Serial: r.DMI.Serial}
		if failed {
			m.Reason = unreadRules
		} else if en, ok := outcomes[r.ID]; ok {
			m.Rule, m.Name, m.Reason = en.Rule, en.Node, en.Reason
		}
		out = append(out, m)
	}
	return out
}

// inbox masks the inbox's machines: MAC and serial as a node's, and any
// identifier in a generated name or a reason.
func (r redactor) inbox(ms []InboxMachine) []InboxMachine {
	if ms == nil {
		return nil
	}
	out := make([]InboxMachine, len(ms))
	for i, m := range ms {
		out[i] = InboxMachine{MAC: maskMAC(m.MAC), Product: r.text(m.Product), Serial: maskTail(m.Serial, 4),
			Rule: m.Rule, Name: r.text(m.Name), Reason: r.text(m.Reason)}
	}
	return out
}
