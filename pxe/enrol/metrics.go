package enrol

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
)

// Metrics counts enrolments per rule and outcome, for /metrics. Its
// zero value is ready; a nil *Metrics counts nothing. Safe for
// concurrent use.
type Metrics struct {
	mu     sync.Mutex
	counts map[[2]string]uint64 // {rule, outcome}
}

// Outcomes of an enrolment as the metrics label them.
const (
	OutcomeEnrolled = "enrolled"
	OutcomeRefused  = "refused"
	OutcomeNoRule   = "no_rule"
)

func (m *Metrics) count(d Decision) {
	if m == nil {
		return
	}
	k := [2]string{d.Rule, OutcomeEnrolled}
	switch {
	case errors.Is(d.Err, ErrNoRule):
		k[1] = OutcomeNoRule
	case d.Err != nil:
		k[1] = OutcomeRefused
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.counts == nil {
		m.counts = map[[2]string]uint64{}
	}
	m.counts[k]++
}

// WriteTo writes the counts in the Prometheus text format, as
// node_provisioner_enrolments_total{rule,outcome}.
func (m *Metrics) WriteTo(w io.Writer) (int64, error) {
	if m == nil {
		return 0, nil
	}
	m.mu.Lock()
	keys := make([][2]string, 0, len(m.counts))
	for k := range m.counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]string) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
	counts := make([]uint64, len(keys))
	for i, k := range keys {
		counts[i] = m.counts[k]
	}
	m.mu.Unlock()
	n, err := fmt.Fprint(w, "# HELP node_provisioner_enrolments_total Discovered machines by enrolment rule and outcome.\n# TYPE node_provisioner_enrolments_total counter\n")
	total := int64(n)
	for i, k := range keys {
		if err != nil {
			break
		}
		n, err = fmt.Fprintf(w, "node_provisioner_enrolments_total{rule=%q,outcome=%q} %d\n", k[0], k[1], counts[i])
		total += int64(n)
	}
	return total, err
}
