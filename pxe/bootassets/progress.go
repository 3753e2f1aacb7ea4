package bootassets

// Progress is one report of [Prepare] on its way, for a progress bar or a
// log. A step that copies bytes (extracting the kernel, copying the ISO,
// building the netboot initrd) is reported as its bytes go by, at most
// once per percent, and once more with Finished when it ends; a note
// (what prepare does next, where it put the release) and a warning are
// reported once each.
type Progress struct {
	// Kind says whether this is a note, a warning or a copy.
	Kind ProgressKind
	// Step is the note or the warning itself, or names the copying step,
	// for example "copy ISO".
	Step string
	// Done and Total count the bytes of a copy: written so far and
	// expected. They are 0 for a note or a warning.
	Done, Total int64
	// Finished is set on a copy's last report, whether the copy
	// succeeded or not (the error is [Prepare]'s), and on every note and
	// warning.
	Finished bool
}

// ProgressKind says what a [Progress] report is.
type ProgressKind uint8

// Kinds of [Progress].
const (
	// ProgressNote: Step is a line for the operator, such as "preparing
	// Proxmox VE 9.2-1 from proxmox-ve_9.2-1.iso".
	ProgressNote ProgressKind = iota
	// ProgressWarning: Step is a warning; [Release.Warnings] keeps it
	// too.
	ProgressWarning
	// ProgressCopy: Done of Total bytes of the step Step are written.
	ProgressCopy
)

// reporter sends prepare's progress to a callback; a nil callback
// discards it.
type reporter struct {
	fn func(Progress)
}

// note reports a step without bytes.
func (r reporter) note(step string) {
	if r.fn != nil {
		r.fn(Progress{Kind: ProgressNote, Step: step, Finished: true})
	}
}

// warn reports a warning.
func (r reporter) warn(line string) {
	if r.fn != nil {
		r.fn(Progress{Kind: ProgressWarning, Step: line, Finished: true})
	}
}

// counter returns a writer that reports the bytes written through it
// against total, or nil when progress is discarded.
func (r reporter) counter(step string, total int64) *progressCounter {
	if r.fn == nil {
		return nil
	}
	return &progressCounter{fn: r.fn, step: step, total: total}
}

// progressCounter reports the bytes of one step, at most once per
// percent.
type progressCounter struct {
	fn       func(Progress)
	step     string
	total    int64
	done     int64
	pct      int64 // last percent reported
	finished bool
}

func (c *progressCounter) Write(b []byte) (int, error) {
	c.done += int64(len(b))
	if c.total > 0 {
		if pct := min(c.done, c.total) * 100 / c.total; pct > c.pct {
			c.pct = pct
			c.fn(Progress{Kind: ProgressCopy, Step: c.step, Done: c.done, Total: c.total})
		}
	}
	return len(b), nil
}

// finish sends the step's last report, once.
func (c *progressCounter) finish() {
	if c == nil || c.finished {
		return
	}
	c.finished = true
	c.fn(Progress{Kind: ProgressCopy, Step: c.step, Done: c.done, Total: c.total, Finished: true})
}
