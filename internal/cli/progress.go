package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// Progress draws a long operation's progress on w (standard error): plain
// lines, one per note and one per tenth of a copy, or on a terminal a bar
// redrawn in place each percent. Write errors are ignored: progress is
// best effort. Its methods may be called from several goroutines.
type Progress struct {
	mu  sync.Mutex
	w   io.Writer
	tty bool
	// the copy being drawn
	step     string
	reported int // last tenth (or, on a terminal, hundredth) drawn
	open     bool
}

// NewProgress returns a Progress drawing on w; on a terminal (w is a
// character device) it draws a bar. A nil w discards everything.
func NewProgress(w io.Writer) *Progress {
	if w == nil {
		w = io.Discard
	}
	p := &Progress{w: w}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

// Line writes one line of its own, such as a note or "warning: …".
func (p *Progress) Line(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w, s)
}

// Copy draws the copy called step, done of total bytes written; finished
// says it ended. A report of a new step starts a new bar. A copy too
// small to reach its first tenth shows 100% when it finishes whole.
func (p *Progress) Copy(step string, done, total int64, finished bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if step != p.step || !p.open {
		p.step, p.reported, p.open = step, 0, true
	}
	steps := 10
	if p.tty {
		steps = 100
	}
	if total > 0 {
		if n := int(min(done, total) * int64(steps) / total); n > p.reported {
			p.reported = n
			p.draw(step, n*100/steps, done, total)
		}
	}
	if !finished {
		return
	}
	if p.reported == 0 && done >= total {
		p.draw(step, 100, done, total)
	}
	if p.tty {
		fmt.Fprintln(p.w)
	}
	p.open = false
}

func (p *Progress) draw(step string, pct int, done, total int64) {
	if p.tty {
		const width = 30
		fill := pct * width / 100
		fmt.Fprintf(p.w, "\r%s [%s%s] %3d%% %s / %s", step, strings.Repeat("=", fill), strings.Repeat(" ", width-fill), pct, humanBytes(done), humanBytes(total))
		return
	}
	fmt.Fprintf(p.w, "%s: %d%% (%s of %s)\n", step, pct, humanBytes(done), humanBytes(total))
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
