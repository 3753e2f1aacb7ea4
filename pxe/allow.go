package pxe

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/answer"
)

// PendingAllow returns an allow function for [DHCPServer]: it admits the
// MACs of pending registrations, and any PXE client while a pending
// registration pins nothing (no MAC, serial or UUID), since that one may
// match whoever asks. The pending list is re-read at most every refresh
// (default 2 s), so the function stays cheap on every packet.
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
		if err != nil {
			if lastErr == nil {
				log.Error("cannot read registrations; offering nothing", "err", err)
			}
			lastErr, macs, anyMAC = err, nil, false
			return
		}
		lastErr = nil
		macs, anyMAC = map[string]bool{}, false
		for _, r := range pending {
			if !r.Pinned() {
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
