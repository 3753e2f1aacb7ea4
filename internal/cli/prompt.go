package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// LinePrompter asks a person at a terminal: it writes each question to
// its writer and reads one line of answer from its reader. It satisfies
// plasmanode.Prompter.
//
// Lines are read by one goroutine, started by the first prompt and ended
// by the end of the input, so that a cancelled context ends a prompt at
// once (Ctrl-C does not wait for Enter); a line typed after a cancelled
// prompt answers the next one.
type LinePrompter struct {
	in  io.Reader
	out io.Writer

	start sync.Once
	lines chan line
}

// line is one line read, or the error that ended the input.
type line struct {
	text string
	err  error
}

// NewLinePrompter returns a [LinePrompter] reading answers from in and
// writing questions to out.
func NewLinePrompter(in io.Reader, out io.Writer) *LinePrompter {
	return &LinePrompter{in: in, out: out, lines: make(chan line)}
}

// Prompt writes question and returns the next line of input, trimmed. An
// end of input is an empty answer; a cancelled ctx returns ctx's error at
// once.
func (l *LinePrompter) Prompt(ctx context.Context, question string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	l.start.Do(func() { go l.read() })
	fmt.Fprint(l.out, question)
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case ln, ok := <-l.lines:
		if !ok {
			return "", nil
		}
		if ln.err != nil && !errors.Is(ln.err, io.EOF) {
			return "", fmt.Errorf("read answer: %w", ln.err)
		}
		return strings.TrimSpace(ln.text), nil
	}
}

// read hands each line of input to the prompts, until the input ends.
func (l *LinePrompter) read() {
	defer close(l.lines)
	r := bufio.NewReader(l.in)
	for {
		s, err := r.ReadString('\n')
		l.lines <- line{s, err}
		if err != nil {
			return
		}
	}
}
