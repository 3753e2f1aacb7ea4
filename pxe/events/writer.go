package events

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Sink takes the events a [Writer] appends, in batches, in order: a
// [Store], or a window backend's recorder.
type Sink interface {
	Append(ctx context.Context, evs ...Event) error
}

// Defaults of [WriterOptions].
const (
	// DefaultQueue is how many events a [Writer] holds before it drops
	// droppable ones.
	DefaultQueue = 4096
	// DefaultBatch is the most events a [Writer] appends at once.
	DefaultBatch = 256
)

// WriterOptions tune a [Writer]; the zero value is the default.
type WriterOptions struct {
	// Queue is how many events wait to be appended at most. Zero means
	// [DefaultQueue].
	Queue int
	// Batch is the most events appended in one call of the sink. Zero
	// means [DefaultBatch].
	Batch int
	// Linger is how long a batch of offered events waits for more to
	// fill it before it is appended: fewer, larger writes under a storm
	// of boot steps, for at most Linger of delay on the event stream. A
	// waited-for event ([Writer.Append]) ends the wait at once. Zero
	// means no wait.
	Linger time.Duration
	// OnDrop, when set, is called with each event dropped for a full
	// queue, from the caller of Offer (keep it cheap: a counter).
	OnDrop func(Event)
	// OnError, when set, is called with the error of a batch the sink
	// refused that no caller waits for (offered events).
	OnError func(error)
}

// ErrWriterClosed is returned by [Writer.Append] after [Writer.Close].
var ErrWriterClosed = errors.New("event writer closed")

// Writer appends events to a [Sink] off its callers' path: one goroutine
// takes them from a bounded queue and appends them in batches, in the
// order they were queued. [Writer.Offer] queues an event without ever
// waiting: when the queue is full, an event of a [Kind.Droppable] kind
// is dropped (and counted), any other waits for room. [Writer.Append]
// queues events and waits until they were appended, so an answer is
// never dropped and its error is its caller's. Safe for concurrent use.
type Writer struct {
	sink    Sink
	opts    WriterOptions
	q       chan item
	dropped atomic.Int64

	mu     sync.RWMutex // held for reading while queueing, for writing by Close
	closed bool
	done   chan struct{}
}

type item struct {
	e    Event
	errc chan error // nil for an offered event
}

// NewWriter starts a writer appending to sink. Close it to flush.
func NewWriter(sink Sink, opts WriterOptions) *Writer {
	if opts.Queue <= 0 {
		opts.Queue = DefaultQueue
	}
	if opts.Batch <= 0 {
		opts.Batch = DefaultBatch
	}
	w := &Writer{sink: sink, opts: opts, q: make(chan item, opts.Queue), done: make(chan struct{})}
	go w.run()
	return w
}

// Offer queues e, to be appended soon. It does not wait for the append,
// and never for room when e's kind is droppable: such an event is
// dropped when the queue is full. An event offered after Close is
// dropped too, whatever its kind.
func (w *Writer) Offer(e Event) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		w.drop(e)
		return
	}
	if e.Kind.Droppable() {
		select {
		case w.q <- item{e: e}:
		default:
			w.drop(e)
		}
		return
	}
	w.q <- item{e: e}
}

func (w *Writer) drop(e Event) {
	w.dropped.Add(1)
	if w.opts.OnDrop != nil {
		w.opts.OnDrop(e)
	}
}

// Append queues evs behind every event queued before and waits until the
// sink appended them, returning its error. It waits for room in the
// queue, never drops an event, and gives up waiting when ctx ends (the
// events queued are appended still).
func (w *Writer) Append(ctx context.Context, evs ...Event) error {
	errc := make(chan error, len(evs))
	if err := w.queue(ctx, evs, errc); err != nil {
		return err
	}
	var errs []error
	for range evs {
		select {
		case err := <-errc:
			if err != nil {
				errs = append(errs, err)
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return errors.Join(errs...)
}

func (w *Writer) queue(ctx context.Context, evs []Event, errc chan error) error {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return ErrWriterClosed
	}
	for _, e := range evs {
		select {
		case w.q <- item{e: e, errc: errc}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Dropped returns how many events were dropped for a full queue.
func (w *Writer) Dropped() int64 { return w.dropped.Load() }

// Close appends what is queued and stops the writer; later Offers drop
// their events and later Appends fail with [ErrWriterClosed].
func (w *Writer) Close() error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.q)
	}
	w.mu.Unlock()
	<-w.done
	return nil
}

func (w *Writer) run() {
	defer close(w.done)
	batch := make([]item, 0, w.opts.Batch)
	evs := make([]Event, 0, w.opts.Batch)
	var linger *time.Timer
	if w.opts.Linger > 0 {
		linger = time.NewTimer(w.opts.Linger)
		linger.Stop()
	}
	for it := range w.q {
		batch = append(batch[:0], it)
		w.fill(&batch, linger)
		evs = evs[:0]
		for _, it := range batch {
			evs = append(evs, it.e)
		}
		err := w.sink.Append(context.Background(), evs...)
		waited := false
		for _, it := range batch {
			if it.errc != nil {
				it.errc <- err
				waited = true
			}
		}
		if err != nil && !waited && w.opts.OnError != nil {
			w.opts.OnError(err)
		}
		clear(batch)
	}
}

// fill adds to batch what is queued, up to a full batch; with linger
// (not nil, stopped) and only offered events in it, it then waits up to
// the linger for more, ending early for a full batch, a waited-for
// event or a closed queue.
func (w *Writer) fill(batch *[]item, linger *time.Timer) {
	waiter := (*batch)[0].errc != nil
	for len(*batch) < w.opts.Batch {
		select {
		case it, ok := <-w.q:
			if !ok {
				return
			}
			*batch = append(*batch, it)
			waiter = waiter || it.errc != nil
			continue
		default:
		}
		break
	}
	if linger == nil || waiter || len(*batch) >= w.opts.Batch {
		return
	}
	linger.Reset(w.opts.Linger)
	defer linger.Stop()
	for len(*batch) < w.opts.Batch {
		select {
		case it, ok := <-w.q:
			if !ok {
				return
			}
			*batch = append(*batch, it)
			if it.errc != nil {
				return
			}
		case <-linger.C:
			return
		}
	}
}
