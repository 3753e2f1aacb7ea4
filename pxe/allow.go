package pxe

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/answer"
)

// PendingAllow returns an allow function for [dhcpserver.Server]: it admits the
// MACs of pending registrations, and any PXE client while a pending
// registration pins no MAC, since that one may be whoever asks (a serial
// or UUID pin is checked when the installer posts its system info). It
// also admits the MACs of consumed registrations (those pinned and those
// their installer posted), so that an installed machine whose boot order
// starts with PXE gets the exit script of [BootHandler] and boots its disk
// at once, rather than waiting for the firmware's PXE timeout (or being
// taken for the next unpinned registration). The lists are re-read at
// most every refresh (default 2 s), so the function stays cheap on every
// packet.
func PendingAllow(reg *answer.Registry, refresh time.Duration, log *slog.Logger) func(net.HardwareAddr) bool {
	if refresh <= 0 {
		refresh = 2 * time.Second
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var (
		mu      sync.Mutex
		read    time.Time
		macs    map[string]bool
		anyMAC  bool
		lastErr error
	)
	load := func() {
		pending, err := reg.Pending(context.Background())
		var consumed []answer.Registration
		if err == nil {
			consumed, err = reg.Consumed(context.Background())
		}
		if err != nil {
			if lastErr == nil {
				log.Error("cannot read registrations; offering nothing", "err", err)
			}
			lastErr, macs, anyMAC = err, nil, false
			return
		}
		lastErr = nil
		macs, anyMAC = map[string]bool{}, false
		for _, r := range consumed {
			for _, m := range r.KnownMACs() {
				macs[m] = true
			}
		}
		for _, r := range pending {
			// DHCP sees no serial or UUID: a registration that pins no MAC
			// may be any PXE client (the answer's matching decides later).
			if len(r.MACs) == 0 {
				anyMAC = true
			}
			for _, m := range r.MACs {
				macs[m] = true
			}
		}
	}
	return func(mac net.HardwareAddr) bool {
		mu.Lock()
		defer mu.Unlock()
		if now := time.Now(); now.Sub(read) >= refresh {
			load()
			read = now
		}
		return anyMAC || macs[mac.String()]
	}
}
