package netboot

import (
	"net"
	"net/http"
	"net/netip"
	"path"
	"sync/atomic"
	"time"

	"github.com/plasmactl/plasma-node/pxe/bootassets"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
)

// fileStage is the step of sending a boot file: the Secure Boot chain's
// shim and grub, and the kernel and initrd grub fetches by TFTP, are
// steps of their own; other files are [events.TFTP].
func fileStage(file string) events.Kind {
	switch path.Base(file) {
	case proxydhcp.ShimBinary:
		return events.Shim
	case proxydhcp.GrubBinary:
		return events.Grub
	case bootassets.AssetKernel:
		return events.Kernel
	case bootassets.AssetNetbootInitrd:
		return events.Initrd
	}
	return events.TFTP
}

// NetEvent is a step of a network boot below HTTP, from the window's
// proxy-DHCP or TFTP server.
type NetEvent struct {
	// Time is when it happened; zero means now.
	Time time.Time
	// Kind says what happened: [events.DHCPOffer] or [events.DHCPAck]
	// (a boot file was offered), [events.DHCPIgnored] (a DHCP request
	// got no reply), [events.TFTP] (a download finished) or
	// [events.TFTPFailed] (a TFTP request was refused or failed).
	Kind events.Kind
	// MAC is the client's hardware address (DHCP only).
	MAC net.HardwareAddr
	// Arch is the client's architecture, in words (DHCP only).
	Arch string
	// Peer is the address the request came from.
	Peer netip.AddrPort
	// File is the boot file offered (DHCP) or requested (TFTP).
	File string
	// Bytes is the number of bytes sent (TFTP only).
	Bytes int64
}

// Net records an event of the window's proxy-DHCP or TFTP server in the
// timeline and the metrics. A DHCP event is filed under the client's
// MAC; a TFTP download, which names no MAC, under the client's address,
// until a boot script or asset request from that address names the MAC.
func (h *Handler) Net(e NetEvent) {
	tl, m := h.cfg.Timeline, h.cfg.Metrics
	at := e.Time
	if at.IsZero() {
		at = tl.now()
	}
	mac := ""
	if e.MAC != nil {
		mac = e.MAC.String()
	}
	switch e.Kind {
	case events.DHCPOffer, events.DHCPAck:
		m.dhcpOffer()
		tl.record(at, "", mac, "", events.DHCPOffer, h.offers.detail(e.Kind, e.File, e.Arch))
	case events.DHCPIgnored:
		m.DHCPIgnored()
	case events.TFTP:
		m.tftpTransfer(e.Bytes)
		ip := ""
		if e.Peer.IsValid() {
			ip = e.Peer.Addr().String()
		}
		tl.record(at, ip, "", "", fileStage(e.File), e.File+" to "+e.Peer.String())
	case events.TFTPFailed:
		m.tftpRefused()
	}
}

// bootFileServed records the Secure Boot chain's shim and grub fetched by
// UEFI HTTP boot in the timeline, under the client's address as TFTP
// downloads are.
func (h *Handler) bootFileServed(r *http.Request, name string) {
	if st := fileStage(name); st != events.TFTP && r.Method == http.MethodGet {
		h.cfg.Timeline.RecordFrom(hostOf(r.RemoteAddr), "", "", st, name+" over HTTP to "+r.RemoteAddr)
	}
}

// offerDetails keeps the details of the last few kinds of offer (kind,
// boot file, architecture): a storm's offers share a handful, so an
// offer's event reuses its detail instead of building it. Safe for
// concurrent use; the zero value is ready.
type offerDetails struct {
	last atomic.Pointer[[]offerDetail]
}

// maxOfferDetails bounds offerDetails.
const maxOfferDetails = 8

type offerDetail struct {
	kind       events.Kind
	file, arch string
	text       string
}

// detail returns the timeline's detail of an offer of file to a client
// of architecture arch.
func (o *offerDetails) detail(kind events.Kind, file, arch string) string {
	var held []offerDetail
	if p := o.last.Load(); p != nil {
		held = *p
	}
	for _, d := range held {
		if d.kind == kind && d.file == file && d.arch == arch {
			return d.text
		}
	}
	d := offerDetail{kind: kind, file: file, arch: arch, text: string(kind) + " " + file + " for " + arch}
	next := append([]offerDetail{d}, held[:min(len(held), maxOfferDetails-1)]...)
	o.last.Store(&next)
	return d.text
}
