package pxe

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// progress writes prepare's progress: plain lines (one per step and one
// per tenth of a long copy), or a bar redrawn in place on a terminal.
type progress struct {
	mu  sync.Mutex
	w   io.Writer
	tty bool
}

func newProgress(w io.Writer) *progress {
	if w == nil {
		w = io.Discard
	}
	p := &progress{w: w}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

// line writes one line; write errors are ignored, progress is best effort.
func (p *progress) line(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w, s)
}

// counter returns a writer that reports the bytes written through it
// against total.
func (p *progress) counter(label string, total int64) *progressCounter {
	return &progressCounter{p: p, label: label, total: total}
}

type progressCounter struct {
	p        *progress
	label    string
	total    int64
	done     int64
	reported int // last tenth (or, on a terminal, hundredth) reported
	finished bool
}

func (c *progressCounter) Write(b []byte) (int, error) {
	c.done += int64(len(b))
	steps := 10
	if c.p.tty {
		steps = 100
	}
	if c.total > 0 {
		if n := int(min(c.done, c.total) * int64(steps) / c.total); n > c.reported {
			c.reported = n
			c.report(n * 100 / steps)
		}
	}
	return len(b), nil
}

func (c *progressCounter) report(pct int) {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	if c.p.tty {
		const width = 30
		fill := pct * width / 100
		fmt.Fprintf(c.p.w, "\r%s [%s%s] %3d%% %s / %s", c.label, strings.Repeat("=", fill), strings.Repeat(" ", width-fill), pct, humanBytes(c.done), humanBytes(c.total))
		return
	}
	fmt.Fprintf(c.p.w, "%s: %d%% (%s of %s)\n", c.label, pct, humanBytes(c.done), humanBytes(c.total))
}

// finish ends the counter's line on a terminal, and reports a file too
// small to reach the first tenth.
func (c *progressCounter) finish() {
	if c.finished {
		return
	}
	c.finished = true
	if c.reported == 0 && c.done >= c.total {
		c.report(100)
	}
	if c.p.tty {
		c.p.mu.Lock()
		fmt.Fprintln(c.p.w)
		c.p.mu.Unlock()
	}
}

// humanBytes formats n in binary units: "1.4 GiB".
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
