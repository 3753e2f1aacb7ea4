package pxe

import (
	"context"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/netboot"
)

// The window's event writer appends a storm's boot steps in writes of up
// to eventBatch, at most eventLinger late on the event stream; an answer
// is never held (events.WriterOptions.Linger).
const (
	eventBatch  = 1024
	eventLinger = 10 * time.Millisecond
)

// eventWriter returns the window's one writer of b's event log (when b
// keeps one, a [backend.Recorder]), else nil. The answer-side events and,
// with RecordBootSteps, the boot steps go through it in one order, off
// the reply path: a proxy-DHCP offer or a TFTP download queues its step
// and goes on; under overload such a step is dropped and counted in
// metrics (plasma_pxe_boot_events_dropped_total), while an answer, a
// refusal or an install waits for room and for its append.
func (s *Server) eventWriter(b backend.Backend, m *netboot.Metrics) *events.Writer {
	rec, ok := b.(backend.Recorder)
	if !ok {
		return nil
	}
	return events.NewWriter(recorderSink{rec}, events.WriterOptions{
		Batch:  eventBatch,
		Linger: eventLinger,
		OnDrop: func(events.Event) { m.BootEventDropped() },
		OnError: func(err error) {
			s.log.Warn("cannot record a boot step in the event log", "err", err)
		},
	})
}

// recorderSink appends to a backend's recorder: in one call when it
// takes batches (an [events.Sink], as the registry's backend is), else
// event by event.
type recorderSink struct{ rec backend.Recorder }

func (r recorderSink) Append(ctx context.Context, evs ...events.Event) error {
	if s, ok := r.rec.(events.Sink); ok {
		return s.Append(ctx, evs...)
	}
	var first error
	for _, e := range evs {
		if err := r.rec.Record(ctx, e); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// bootSteps returns the window's timeline: one that records the boot
// steps through w with RecordBootSteps (when the backend keeps an event
// log), else nil (netboot's own).
func (s *Server) bootSteps(w *events.Writer) *netboot.Timeline {
	if !s.cfg.RecordBootSteps || w == nil {
		return nil
	}
	return &netboot.Timeline{OnRecord: func(ev netboot.BootEvent) {
		switch ev.Stage {
		case events.Answer, events.FirstBoot, events.Webhook:
			return // the answer side records these itself
		}
		w.Offer(backend.Event{Time: ev.Time, Kind: ev.Stage, Node: ev.Node, MAC: ev.MAC, ClientIP: ev.IP, Detail: ev.Detail})
	}}
}
