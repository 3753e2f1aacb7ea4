package regbackend

import (
	"context"
	"net"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

var _ backend.SecureBooter = (*Backend)(nil)

// Allow admits the MACs of pending registrations, and any PXE client
// while a pending registration pins no MAC, since that one may be whoever
// asks (a serial or UUID pin is checked when the installer posts its
// system info). It also admits the MACs of consumed registrations (those
// pinned and those their installer posted), so that an installed machine
// whose boot order starts with PXE gets the exit script of [Backend.Boot]
// and boots its disk at once, rather than waiting for the firmware's PXE
// timeout (or being taken for the next unpinned registration).
//
// Allow is on every DHCP packet's path, so it reads no file and takes no
// lock: it answers from the lists last read, and when they are older than
// AllowRefresh it starts one re-read in the background, so a change is
// seen within AllowRefresh and one read of the registrations. Only the
// first call reads them itself. While they cannot be read, nothing is
// admitted: a read that fails clears the lists, and while a read has hung
// for AllowMaxAge (a store that does not answer) nobody is admitted.
func (b *Backend) Allow(mac net.HardwareAddr) bool {
	l := b.allow.Load()
	now := time.Now()
	if l == nil {
		l = b.loadAllow()
	} else if now.Sub(l.read) >= b.cfg.AllowRefresh && b.allowSince.CompareAndSwap(0, now.UnixNano()) {
		go func() {
			defer b.allowSince.Store(0)
			b.loadAllow()
		}()
	} else if since := b.allowSince.Load(); since != 0 && now.UnixNano()-since >= int64(b.cfg.AllowMaxAge) {
		return false
	}
	if l.any {
		return true
	}
	return lookupMAC(l.macs, mac)
}

// SecureBoot reports whether the machine with this MAC boots the Secure
// Boot chain: a registration (pending, or consumed, so that an installed
// machine with Secure Boot on gets grub's exit rather than an iPXE it
// cannot run) that asks for it pins the MAC or its installer posted it.
// Like [Backend.Allow] it answers from the lists last read, without a
// lock or an allocation; the window asks it for UEFI x86-64 clients only.
func (b *Backend) SecureBoot(mac net.HardwareAddr) bool {
	l := b.allow.Load()
	if l == nil {
		l = b.loadAllow()
	}
	return lookupMAC(l.secureBoot, mac)
}

// lookupMAC looks mac up in m by its normalised form, without the
// allocation of mac.String(): the map lookup of a converted byte slice
// copies nothing.
func lookupMAC(m map[string]bool, mac net.HardwareAddr) bool {
	if len(mac) != 6 {
		return m[mac.String()]
	}
	const hex = "0123456789abcdef"
	var k [17]byte
	for i, c := range mac {
		if i > 0 {
			k[3*i-1] = ':'
		}
		k[3*i], k[3*i+1] = hex[c>>4], hex[c&0xf]
	}
	return m[string(k[:])]
}

// allowList is what [Backend.Allow] answers from.
type allowList struct {
	read time.Time
	macs map[string]bool
	// secureBoot holds the MACs of registrations that ask for the Secure
	// Boot chain.
	secureBoot map[string]bool
	any        bool
	err        error
}

// loadAllow reads the registrations into a new allow list and returns it;
// one load runs at a time.
func (b *Backend) loadAllow() *allowList {
	b.allowMu.Lock()
	defer b.allowMu.Unlock()
	// The list serves every request: no one request's context bounds it.
	ctx, cancel := context.WithTimeout(context.Background(), storeCallTimeout)
	defer cancel()
	l := &allowList{read: time.Now()}
	prev := b.allow.Load()
	pending, broken, err := b.cfg.Store.Scan(ctx)
	var consumed []registry.Registration
	if err == nil {
		consumed, err = b.cfg.Store.Consumed(ctx)
	}
	if err != nil {
		if prev == nil || prev.err == nil {
			b.log.Error("cannot read registrations; offering nothing", "err", err)
		}
		l.err = err
		b.allow.Store(l)
		return l
	}
	l.macs, l.secureBoot = map[string]bool{}, map[string]bool{}
	for _, r := range consumed {
		for _, m := range r.KnownMACs() {
			l.macs[m] = true
			if r.SecureBoot {
				l.secureBoot[m] = true
			}
		}
	}
	for _, r := range pending {
		// DHCP sees no serial or UUID: a registration that pins no MAC
		// may be any PXE client (the answer's matching decides later),
		// unless a broken registration blocks matching by elimination.
		if len(r.MACs) == 0 && len(broken) == 0 {
			l.any = true
		}
		for _, m := range r.MACs {
			l.macs[m] = true
			if r.SecureBoot {
				l.secureBoot[m] = true
			}
		}
	}
	b.allow.Store(l)
	return l
}
