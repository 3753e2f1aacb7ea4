package folder

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/events"
)

// TestTwoWritersRotateWithoutLosingAnEvent: two writers on one log, as a
// daemon and a local power command are, with the size bound shrunk so
// that it rotates every few events. A reader that reads after its last
// id after each append gets every event, in the order appended: none
// lands in the rotated part after the reader moved on (the window's
// answer event did, once the power command had rotated), and no writer
// rotates the other's file away by a size it counted alone.
func TestTwoWritersRotateWithoutLosingAnEvent(t *testing.T) {
	path := EventsPath(t.TempDir())
	const bound = 2 << 10
	serve, power := OpenEvents(path, EventsOptions{MaxSize: bound}), OpenEvents(path, EventsOptions{MaxSize: bound})
	defer serve.Close()
	defer power.Close()
	detail := strings.Repeat("x", 200)
	var want, got []string
	last := ""
	for i := range 200 {
		w, who := serve, "answer"
		if i%3 == 0 {
			w, who = power, "bmc"
		}
		node := fmt.Sprintf("%s-%03d", who, i)
		want = append(want, node)
		if err := w.Append(t.Context(), events.Event{Kind: events.Answer, Node: node, Detail: detail}); err != nil {
			t.Fatal(err)
		}
		recs, err := serve.Read(t.Context(), last, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			got = append(got, r.Event.Node)
			last = r.ID
		}
	}
	if !slices.Equal(got, want) {
		var missed []string
		for _, n := range want {
			if !slices.Contains(got, n) {
				missed = append(missed, n)
			}
		}
		t.Errorf("the reader got %d of %d events; missed %d: %v", len(got), len(want), len(missed), missed[:min(len(missed), 10)])
	}
	kept, err := readEvents(path)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, e := range kept {
		nodes = append(nodes, e.Node)
	}
	if len(nodes) == 0 || !slices.Equal(nodes, want[len(want)-len(nodes):]) {
		t.Errorf("the log keeps %v, want the last events appended, in order", nodes)
	}
}

// TestAReaderTwoRotationsBehind: a reader whose file was rotated away
// twice since it last read gets the rest of its file, then the rotated
// part, then the current file.
func TestAReaderTwoRotationsBehind(t *testing.T) {
	path := EventsPath(t.TempDir())
	appendEvents(t, path, "a")
	tl, err := openTail(path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer tl.close()
	if _, nodes := drain(t, tl); !slices.Equal(nodes, []string{"a"}) {
		t.Fatalf("first: %v", nodes)
	}
	appendEvents(t, path, "b")
	for _, n := range []string{"c", "d"} {
		if err := os.Rename(path, path+".1"); err != nil {
			t.Fatal(err)
		}
		appendEvents(t, path, n)
	}
	if _, nodes := drain(t, tl); !slices.Equal(nodes, []string{"b", "c", "d"}) {
		t.Errorf("two rotations behind: %v, want b c d", nodes)
	}
}

// helperEnv names the log a helper process appends to.
const helperEnv = "EVENTFILE_TEST_APPEND"

// twoProcessBound is the size bound of the two-process test: the events
// of both writers (about 250 KB) rotate it once, and the log keeps them
// all, so a follower slowed by a loaded machine loses none to the bound.
const twoProcessBound = 192 << 10

// TestMain runs the helper process of TestTwoProcessesAppendAndRotate
// when asked to.
func TestMain(m *testing.M) {
	if path := os.Getenv(helperEnv); path != "" {
		s := OpenEvents(path, EventsOptions{MaxSize: twoProcessBound})
		for i := range 500 {
			if err := s.Append(context.Background(), events.Event{Kind: events.BMC, Node: "power-" + strconv.Itoa(i), Detail: strings.Repeat("p", 200)}); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestTwoProcessesAppendAndRotate: a second process appends to the log
// while this one does, both rotating it; a follower gets each event of
// both once, and each writer's in the order it appended them.
func TestTwoProcessesAppendAndRotate(t *testing.T) {
	path := EventsPath(t.TempDir())
	s := OpenEvents(path, EventsOptions{MaxSize: twoProcessBound, Poll: 5 * time.Millisecond})
	defer s.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	seen := map[string]int{}
	var order []string
	done := make(chan error, 1)
	go func() {
		done <- s.Follow(ctx, "", func(r events.Record) error {
			seen[r.Event.Node]++
			order = append(order, r.Event.Node)
			if len(order) == 1000 {
				return errStop
			}
			return nil
		})
	}()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	out := &strings.Builder{}
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		if err := s.Append(ctx, events.Event{Kind: events.Answer, Node: "serve-" + strconv.Itoa(i), Detail: strings.Repeat("s", 200)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the other writer: %v\n%s", err, out)
	}
	if err := <-done; err != errStop {
		t.Fatalf("follow: %v after %d events", err, len(order))
	}
	for _, who := range []string{"serve-", "power-"} {
		next := 0
		for _, n := range order {
			if !strings.HasPrefix(n, who) {
				continue
			}
			if n != who+strconv.Itoa(next) || seen[n] != 1 {
				t.Fatalf("%s: got %s (seen %d times), want %s%d next", who, n, seen[n], who, next)
			}
			next++
		}
	}
}

var errStop = fmt.Errorf("stop")

// TestAReaderStartedBeforeTheLog: a reader from the oldest event, started
// before the log had a file, gets its first file even when it was
// rotated before the reader first looked (the suite's two followers
// found it missing); and a reader that finished the rotated part while
// the log was mid-rotation reads the part that replaced it.
func TestAReaderStartedBeforeTheLog(t *testing.T) {
	path := EventsPath(t.TempDir())
	tl, err := openTail(path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer tl.close()
	appendEvents(t, path, "a", "b")
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	appendEvents(t, path, "c")
	if _, nodes := drain(t, tl); !slices.Equal(nodes, []string{"a", "b", "c"}) {
		t.Errorf("started before the log: %v, want a b c", nodes)
	}

	// Mid-rotation: the current file renamed over the rotated part the
	// reader is at, the new one not created yet.
	path2 := EventsPath(t.TempDir())
	appendEvents(t, path2, "d")
	os.Rename(path2, path2+".1")
	appendEvents(t, path2, "e")
	tl2, err := openTail(path2, "")
	if err != nil {
		t.Fatal(err)
	}
	defer tl2.close()
	recs, _ := tl2.next() // d, from the rotated part
	if len(recs) != 1 || recs[0].Event.Node != "d" {
		t.Fatalf("first read: %v", recs)
	}
	os.Rename(path2, path2+".1") // e's file replaces d's; no current file
	if _, nodes := drain(t, tl2); !slices.Equal(nodes, []string{"e"}) {
		t.Errorf("mid-rotation: %v, want e", nodes)
	}
	appendEvents(t, path2, "f")
	if _, nodes := drain(t, tl2); !slices.Equal(nodes, []string{"f"}) {
		t.Errorf("after the rotation: %v, want f", nodes)
	}
}
