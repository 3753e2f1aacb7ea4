package cli

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLinePrompterReadsOneLineAPrompt(t *testing.T) {
	var out strings.Builder
	lp := NewLinePrompter(strings.NewReader("yes\n  no \nlast"), &out)
	var got []string
	for range 4 {
		a, err := lp.Prompt(context.Background(), "q? ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, a)
	}
	if diff := cmp.Diff([]string{"yes", "no", "last", ""}, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("q? q? q? q? ", out.String()); diff != "" {
		t.Errorf("questions written (-want +got):\n%s", diff)
	}
}

// TestLinePrompterEndsAtOnceWhenCancelled: Ctrl-C at a prompt must not
// wait for Enter.
func TestLinePrompterEndsAtOnceWhenCancelled(t *testing.T) {
	r, w := io.Pipe() // nothing is ever typed
	defer w.Close()
	lp := NewLinePrompter(r, io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := lp.Prompt(ctx, "Apply this plan? [y/N]: ")
		done <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the prompt wait for its line
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Prompt() error = %v, want context.Canceled", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Prompt() still waits for a line after its context was cancelled")
	}
	// A line typed later answers the next prompt.
	go w.Write([]byte("yes\n"))
	if a, err := lp.Prompt(context.Background(), "again? "); err != nil || a != "yes" {
		t.Errorf("next Prompt() = %q, %v; want yes", a, err)
	}
}

func TestLinePrompterRefusesACancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out strings.Builder
	if _, err := NewLinePrompter(strings.NewReader("yes\n"), &out).Prompt(ctx, "q? "); !errors.Is(err, context.Canceled) || out.Len() != 0 {
		t.Errorf("Prompt() = %v, wrote %q; want context.Canceled and no question", err, out.String())
	}
}
