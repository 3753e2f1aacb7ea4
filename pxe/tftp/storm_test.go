package tftp

import (
	"bytes"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pintftp "github.com/pin/tftp/v3"

	"github.com/plasmactl/plasma-node/pxe/events"
)

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(es)
}

// TestStormFromOneAddressCompletes: 200 reads at once from one address,
// at the default bounds (50 transfers, 4 per address), all complete: the
// requests beyond the bounds wait, holding no descriptor, and are served
// in turn; none gets an error packet (the library this server replaced
// refused 196 of 200 with "too many transfers from this client").
func TestStormFromOneAddressCompletes(t *testing.T) {
	fx := newTFTPFixture(t)
	var evs eventLog
	addr, _, _ := startTFTP(t, fx, &evs)
	const clients = 200
	base := openFDs(t)
	var failures atomic.Int64
	var peak atomic.Int64
	stop := make(chan struct{})
	var watch sync.WaitGroup
	watch.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			if n := int64(openFDs(t)); n > peak.Load() {
				peak.Store(n)
			}
		}
	})
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			cl, err := pintftp.NewClient(addr.String())
			if err != nil {
				t.Error(err)
				return
			}
			cl.SetBlockSize(1468)
			cl.SetTimeout(2 * time.Second)
			cl.SetRetries(10)
			wt, err := cl.Receive("ipxe.efi", "octet")
			if err != nil {
				failures.Add(1)
				t.Logf("receive: %v", err)
				return
			}
			var buf bytes.Buffer
			if _, err := wt.WriteTo(&buf); err != nil || !bytes.Equal(buf.Bytes(), fx.payload) {
				failures.Add(1)
				t.Logf("download: %v (%d bytes)", err, buf.Len())
			}
		})
	}
	wg.Wait()
	close(stop)
	watch.Wait()
	if n := failures.Load(); n != 0 {
		t.Errorf("%d of %d reads failed, want 0", n, clients)
	}
	// Each client holds one socket of its own while it waits. The server
	// holds two descriptors for each of at most 4 running transfers of
	// this address; the library it replaced held a socket per request
	// (another 200).
	if extra := int(peak.Load()) - base - clients; extra > 2*DefaultMaxTransfersPerClient+16 {
		t.Errorf("peak of %d descriptors beyond the clients' own (%d at the start): waiting requests hold descriptors", extra, base)
	}
	evs.mu.Lock()
	defer evs.mu.Unlock()
	for _, e := range evs.events {
		if e.Kind != events.TFTP {
			t.Errorf("event %+v, want only tftp-sent", e)
		}
	}
}
