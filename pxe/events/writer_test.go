package events_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/events"
)

// gatedSink keeps what it is given, once its gate is open.
type gatedSink struct {
	gate    chan struct{}
	mu      sync.Mutex
	got     []events.Event
	batches int
	err     error
}

func newGated(open bool) *gatedSink {
	s := &gatedSink{gate: make(chan struct{})}
	if open {
		close(s.gate)
	}
	return s
}

func (s *gatedSink) Append(_ context.Context, evs ...events.Event) error {
	<-s.gate
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, evs...)
	s.batches++
	return s.err
}

func (s *gatedSink) nodes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, e := range s.got {
		out = append(out, e.Node)
	}
	return out
}

func TestWriterAppendsInOrderInBatches(t *testing.T) {
	sink := newGated(true)
	w := events.NewWriter(sink, events.WriterOptions{})
	var want []string
	for i := range 1000 {
		n := strconv.Itoa(i)
		want = append(want, n)
		w.Offer(events.Event{Kind: events.DHCPOffer, Node: n})
	}
	if err := w.Append(context.Background(), events.Event{Kind: events.Answer, Node: "last"}); err != nil {
		t.Fatal(err)
	}
	want = append(want, "last")
	w.Close()
	if diff := cmp.Diff(want, sink.nodes()); diff != "" {
		t.Errorf("appended (-want +got):\n%s", diff)
	}
	if sink.batches >= 1001 {
		t.Errorf("%d batches for 1001 events: want them batched", sink.batches)
	}
	if w.Dropped() != 0 {
		t.Errorf("dropped %d with room in the queue", w.Dropped())
	}
}

// TestWriterDropsBootStepsUnderOverload: with the sink stuck (a log on a
// slow disk, a boot storm), offering proxy-DHCP and TFTP steps never
// waits: what the queue cannot hold is dropped and counted.
func TestWriterDropsBootStepsUnderOverload(t *testing.T) {
	sink := newGated(false)
	var onDrop atomic.Int64
	w := events.NewWriter(sink, events.WriterOptions{Queue: 16, Batch: 4, OnDrop: func(events.Event) { onDrop.Add(1) }})
	start := time.Now()
	const n = 10000
	for i := range n {
		k := events.DHCPOffer
		if i%2 == 1 {
			k = events.TFTP
		}
		w.Offer(events.Event{Kind: k, Node: strconv.Itoa(i)})
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("offering %d steps to a stuck sink took %v: want no wait", n, took)
	}
	if w.Dropped() < n-16-4 || onDrop.Load() != w.Dropped() {
		t.Errorf("dropped %d (OnDrop %d) of %d with a queue of 16: want all the queue could not hold, each counted", w.Dropped(), onDrop.Load(), n)
	}
	close(sink.gate)
	w.Close()
	if got := int64(len(sink.nodes())); got+w.Dropped() != n {
		t.Errorf("%d appended + %d dropped != %d offered", got, w.Dropped(), n)
	}
}

// TestWriterNeverDropsAnswers: with the queue full of boot steps and the
// sink stuck, answers, refusals, installs, first-boot and BMC events wait
// for room, through Append and through Offer alike, and every one is
// appended once, in its writer's order; Append returns the sink's error.
func TestWriterNeverDropsAnswers(t *testing.T) {
	sink := newGated(false)
	w := events.NewWriter(sink, events.WriterOptions{Queue: 4, Batch: 2})
	for range 100 {
		w.Offer(events.Event{Kind: events.DHCPOffer, Node: "step"})
	}
	kinds := []events.Kind{events.Answer, events.Refused, events.Installed, events.FirstBoot, events.BMC, events.Script}
	var wg sync.WaitGroup
	want := map[string]bool{}
	for g := range 8 {
		for i := range 20 {
			want["g"+strconv.Itoa(g)+"-"+strconv.Itoa(i)] = true
		}
		wg.Go(func() {
			for i := range 20 {
				e := events.Event{Kind: kinds[(g+i)%len(kinds)], Node: "g" + strconv.Itoa(g) + "-" + strconv.Itoa(i)}
				if g%2 == 0 {
					if err := w.Append(context.Background(), e); err != nil {
						t.Errorf("append %s: %v", e.Node, err)
					}
				} else {
					w.Offer(e)
				}
			}
		})
	}
	time.Sleep(100 * time.Millisecond)
	dropped := w.Dropped()
	close(sink.gate)
	wg.Wait()
	w.Close()
	if w.Dropped() != dropped {
		t.Errorf("dropped %d more once the answers came", w.Dropped()-dropped)
	}
	next := map[string]int{}
	for _, n := range sink.nodes() {
		if n == "step" {
			continue
		}
		if !want[n] {
			t.Fatalf("%s appended twice or unknown", n)
		}
		delete(want, n)
		g, i := n[:2], n[3:]
		if strconv.Itoa(next[g]) != i {
			t.Errorf("%s appended where %s-%d was next", n, g, next[g])
		}
		next[g]++
	}
	if len(want) > 0 {
		t.Errorf("%d answer-side events never appended", len(want))
	}

	failing := newGated(true)
	failing.err = errors.New("disk full")
	fw := events.NewWriter(failing, events.WriterOptions{})
	if err := fw.Append(context.Background(), events.Event{Kind: events.Answer}); err == nil || err.Error() != "disk full" {
		t.Errorf("append to a failing sink = %v, want its error", err)
	}
	fw.Close()
	if err := fw.Append(context.Background(), events.Event{Kind: events.Answer}); !errors.Is(err, events.ErrWriterClosed) {
		t.Errorf("append after close = %v, want ErrWriterClosed", err)
	}
}

// TestWriterLingers: with a linger, boot steps offered a few at a time
// go to the sink in one batch, not one each; an answer appended during
// the wait ends it at once rather than waiting out the linger.
func TestWriterLingers(t *testing.T) {
	sink := newGated(true)
	w := events.NewWriter(sink, events.WriterOptions{Linger: 500 * time.Millisecond})
	for i := range 10 {
		w.Offer(events.Event{Kind: events.DHCPOffer, Node: strconv.Itoa(i)})
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	if err := w.Append(context.Background(), events.Event{Kind: events.Answer, Node: "answer"}); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	w.Close()
	if took > 250*time.Millisecond {
		t.Errorf("an answer appended during the linger waited %v, want it appended at once", took)
	}
	want := []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "answer"}
	if diff := cmp.Diff(want, sink.nodes()); diff != "" {
		t.Errorf("appended (-want +got):\n%s", diff)
	}
	if sink.batches != 1 {
		t.Errorf("%d batches for 10 boot steps offered 5 ms apart and an answer, within a 500 ms linger: want 1", sink.batches)
	}
}
