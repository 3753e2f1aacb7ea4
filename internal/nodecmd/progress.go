package nodecmd

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/providers"
)

// progress prints the steps of the machines a provision started, one
// line per step as it happens, and at the end one line per machine with
// all its steps.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	steps map[string][]string
	last  map[string]time.Time
}

func newProgress(w io.Writer) *progress {
	return &progress{w: w, start: time.Now(), steps: map[string][]string{}, last: map[string]time.Time{}}
}

// step prints one step.
func (p *progress) step(s providers.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.Time.IsZero() {
		s.Time = time.Now()
	}
	detail := s.Detail
	if s.Err != nil {
		detail = s.Err.Error()
	}
	if !slices.Contains(p.steps[s.Hostname], string(s.Step)) {
		p.steps[s.Hostname] = append(p.steps[s.Hostname], string(s.Step))
	}
	p.last[s.Hostname] = s.Time
	fmt.Fprintf(p.w, "%s  %-20s %-9s %s\n", s.Time.Local().Format("15:04:05"), s.Hostname, s.Step, detail)
}

// summary prints each started machine's steps on one line.
func (p *progress) summary(hosts []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, h := range hosts {
		took := ""
		if t, ok := p.last[h]; ok {
			took = fmt.Sprintf(" (%s)", t.Sub(p.start).Round(time.Second))
		}
		steps := p.steps[h]
		if len(steps) == 0 {
			steps = []string{"no step seen"}
		}
		fmt.Fprintf(p.w, "Machine %s: %s%s\n", h, strings.Join(steps, " > "), took)
	}
}
