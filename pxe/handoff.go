package pxe

import (
	"errors"
	"net"
	"sync"
)

// handoff is the accepting half of a listener that vets the connections
// of an inner listener in goroutines of its own (TLS sniffing, per-client
// places) and hands the ones it keeps to Accept.
type handoff struct {
	inner net.Listener
	conns chan net.Conn
	done  chan struct{} // closed by Close or when inner fails
	once  sync.Once
	mu    sync.Mutex
	err   error
}

func newHandoff(inner net.Listener) handoff {
	return handoff{inner: inner, conns: make(chan net.Conn), done: make(chan struct{})}
}

// acceptLoop accepts the inner listener's connections and passes each
// to vet until the inner listener fails for good, which stops h.
func (h *handoff) acceptLoop(vet func(net.Conn)) {
	for {
		c, err := h.inner.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			h.stop(err)
			return
		}
		vet(c)
	}
}

// deliver hands c to Accept, or closes it once the listener is closed.
func (h *handoff) deliver(c net.Conn) {
	select {
	case h.conns <- c:
	case <-h.done:
		c.Close()
	}
}

func (h *handoff) stop(err error) {
	h.once.Do(func() {
		h.mu.Lock()
		h.err = err
		h.mu.Unlock()
		close(h.done)
	})
}

// Accept returns the next connection handed on.
func (h *handoff) Accept() (net.Conn, error) {
	select {
	case c := <-h.conns:
		return c, nil
	case <-h.done:
		h.mu.Lock()
		defer h.mu.Unlock()
		return nil, h.err
	}
}

// Close stops accepting; connections already handed on stay open.
func (h *handoff) Close() error {
	h.stop(net.ErrClosed)
	return h.inner.Close()
}

// Addr is the inner listener's address.
func (h *handoff) Addr() net.Addr { return h.inner.Addr() }
