package cli

import (
	"bytes"
	"strings"
	"testing"
)

func TestProgressDrawsTenthsAndSmallFiles(t *testing.T) {
	var b bytes.Buffer
	p := NewProgress(&b)
	p.Line("preparing")
	for done := int64(50); done <= 1000; done += 50 {
		p.Copy("copy", done, 1000, false)
	}
	p.Copy("copy", 1000, 1000, true)
	p.Copy("tiny", 3, 10, false)
	p.Copy("tiny", 10, 10, false)
	p.Copy("tiny", 10, 10, true)
	p.Copy("empty", 0, 0, true)
	p.Line("warning: careful")
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 15 || lines[0] != "preparing" || lines[1] != "copy: 10% (100 B of 1000 B)" || lines[10] != "copy: 100% (1000 B of 1000 B)" ||
		lines[11] != "tiny: 30% (3 B of 10 B)" || lines[12] != "tiny: 100% (10 B of 10 B)" || lines[13] != "empty: 100% (0 B of 0 B)" || lines[14] != "warning: careful" {
		t.Errorf("progress lines:\n%s", b.String())
	}
	if got := humanBytes(1536 << 20); got != "1.5 GiB" {
		t.Errorf("humanBytes = %q, want 1.5 GiB", got)
	}
}

func TestProgressRedrawsABarOnATerminal(t *testing.T) {
	var b bytes.Buffer
	p := &Progress{w: &b, tty: true}
	p.Copy("copy ISO", 512, 1024, false)
	p.Copy("copy ISO", 1024, 1024, false)
	p.Copy("copy ISO", 1024, 1024, true)
	want := "\rcopy ISO [===============               ]  50% 512 B / 1.0 KiB" +
		"\rcopy ISO [==============================] 100% 1.0 KiB / 1.0 KiB\n"
	if b.String() != want {
		t.Errorf("bar = %q, want %q", b.String(), want)
	}
}
