package windowtest

import (
	"context"
	"errors"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/window"
)

// at is a time with no monotonic reading, as a store gives it back.
func at(d time.Duration) time.Time { return time.Now().Add(d).UTC().Round(time.Millisecond) }

func noneIsNil(t T, h Harness) {
	ctx := context.Background()
	s := h.NewSite(t)
	if w, err := s.Read(ctx); w != nil || err != nil {
		t.Errorf("read of a new store: %+v %v", w, err)
	}
	if open, err := s.Close(ctx); open || err != nil {
		t.Errorf("close of a new store: %v %v", open, err)
	}
}

func passedReplaced(t T, h Harness) {
	ctx := context.Background()
	s := h.NewSite(t)
	old := window.Site{Opened: at(-2 * time.Hour), Deadline: at(-time.Hour), By: "a"}
	now := window.Site{Opened: at(0), Deadline: at(time.Hour), By: "b"}
	if err := s.Open(ctx, old); err != nil {
		t.Fatalf("%v", err)
	}
	if err := s.Open(ctx, now); err != nil {
		t.Fatalf("open over a passed window: %v", err)
	}
	if w, err := s.Read(ctx); err != nil || !w.Same(&now) {
		t.Errorf("read: %+v %v", w, err)
	}
}

func closeRemoves(t T, h Harness) {
	ctx := context.Background()
	s := h.NewSite(t)
	if err := s.Open(ctx, window.Site{Opened: at(0), Deadline: at(time.Hour)}); err != nil {
		t.Fatalf("%v", err)
	}
	if open, err := s.Close(ctx); !open || err != nil {
		t.Errorf("close: %v %v", open, err)
	}
	if w, err := s.Read(ctx); w != nil || err != nil {
		t.Errorf("read after close: %+v %v", w, err)
	}
	if open, err := s.Close(ctx); open || err != nil {
		t.Errorf("second close: %v %v", open, err)
	}
}

func anotherHost(t T, h Harness) {
	if h.OtherSite == nil {
		t.Logf("no OtherSite: a store of one host")
		return
	}
	ctx := context.Background()
	s := h.NewSite(t)
	o := h.OtherSite(t, s)
	w := window.Site{Opened: at(0), Deadline: at(time.Hour), By: "a"}
	if err := s.Open(ctx, w); err != nil {
		t.Fatalf("%v", err)
	}
	if got, err := o.Read(ctx); err != nil || !got.Same(&w) || got.By != "a" {
		t.Errorf("the other host reads %+v %v", got, err)
	}
	if err := o.Open(ctx, window.Site{Opened: at(0), Deadline: at(time.Minute), By: "b"}); !errors.Is(err, window.ErrOpen) {
		t.Errorf("the other host's open: %v", err)
	}
	if open, err := o.Close(ctx); !open || err != nil {
		t.Errorf("the other host's close: %v %v", open, err)
	}
	if got, err := s.Read(ctx); got != nil || err != nil {
		t.Errorf("closed by the other: %+v %v", got, err)
	}
}

func openIsReadBack(t T, h Harness) {
	s := h.NewSite(t)
	w := window.Site{Opened: at(0), Deadline: at(time.Hour), SecureBoot: true, Discover: true, By: "host-a"}
	if err := s.Open(context.Background(), w); err != nil {
		t.Fatalf("%v", err)
	}
	got, err := s.Read(context.Background())
	if err != nil {
		t.Fatalf("%v", err)
	}
	if d := cmp.Diff(&w, got); d != "" {
		t.Errorf("read back (-want +got):\n%s", d)
	}
	if !got.OpenAt(time.Now()) || got.OpenAt(w.Deadline) {
		t.Errorf("OpenAt of %+v", got)
	}
}

func secondOpen(t T, h Harness) {
	s := h.NewSite(t)
	first := window.Site{Opened: at(0), Deadline: at(time.Hour), By: "host-a"}
	if err := s.Open(context.Background(), first); err != nil {
		t.Fatalf("%v", err)
	}
	err := s.Open(context.Background(), window.Site{Opened: at(0), Deadline: at(time.Minute), By: "host-b"})
	var oe *window.OpenError
	if !errors.As(err, &oe) || !errors.Is(err, window.ErrOpen) {
		t.Fatalf("second open: %v", err)
	}
	if d := cmp.Diff(first, oe.Current); d != "" {
		t.Errorf("the refusal's window (-want +got):\n%s", d)
	}
	if got, _ := s.Read(context.Background()); !got.Same(&first) {
		t.Errorf("the first window changed: %+v", got)
	}
}

func endOwn(t T, h Harness) {
	ctx := context.Background()
	s := h.NewSite(t)
	w := window.Site{Opened: at(0), Deadline: at(time.Hour)}
	other := window.Site{Opened: at(-time.Minute), Deadline: at(time.Hour)}
	if err := s.Open(ctx, w); err != nil {
		t.Fatalf("%v", err)
	}
	if err := s.End(ctx, other); err != nil {
		t.Fatalf("%v", err)
	}
	if got, err := s.Read(ctx); err != nil || !got.Same(&w) {
		t.Fatalf("another window's end removed it: %+v %v", got, err)
	}
	if err := s.End(ctx, w); err != nil {
		t.Fatalf("%v", err)
	}
	if got, err := s.Read(ctx); got != nil || err != nil {
		t.Errorf("after its end: %+v %v", got, err)
	}
	if err := s.End(ctx, w); err != nil {
		t.Errorf("end of none: %v", err)
	}
}

func hostsSince(t T, h Harness) {
	ctx := context.Background()
	s := h.NewSite(t)
	a := window.Host{Name: "a", API: "10.0.0.1:8091", HTTP: "10.0.0.1:8080", URL: "http://10.0.0.1:8080", Serving: true, Seen: at(0)}
	b := window.Host{Name: "b", API: "10.0.0.2:8091", Seen: at(-time.Minute)}
	for _, host := range []window.Host{b, a} {
		if err := s.Advertise(ctx, host); err != nil {
			t.Fatalf("%v", err)
		}
	}
	got, err := s.Hosts(ctx, at(-30*time.Second))
	if d := cmp.Diff([]window.Host{a}, got); err != nil || d != "" {
		t.Errorf("hosts seen in 30 s (-want +got): %v\n%s", err, d)
	}
	b.Seen, b.Serving = at(0), true
	if err := s.Advertise(ctx, b); err != nil {
		t.Fatalf("%v", err)
	}
	got, err = s.Hosts(ctx, at(-30*time.Second))
	if d := cmp.Diff([]window.Host{a, b}, got); err != nil || d != "" {
		t.Errorf("hosts after b's advert (-want +got): %v\n%s", err, d)
	}
}

func changesSignalled(t T, h Harness) {
	s := h.NewSite(t)
	watch := s
	if h.OtherSite != nil {
		watch = h.OtherSite(t, s) // another host learns of it
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ch := watch.Changes(ctx)
	time.Sleep(200 * time.Millisecond) // a listener is set up
	w := window.Site{Opened: at(0), Deadline: at(time.Hour)}
	for i, change := range []func() error{
		func() error { return s.Open(ctx, w) },
		func() error { _, err := s.Close(ctx); return err },
	} {
		if err := change(); err != nil {
			t.Fatalf("%v", err)
		}
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatalf("change %d not signalled in 5 s", i)
		}
	}
}
