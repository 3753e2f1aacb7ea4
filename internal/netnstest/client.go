package netnstest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
	"github.com/pin/tftp/v3"
	"golang.org/x/sys/unix"
)

// PXEClient plays a UEFI machine booting from the network in a lab's
// client namespace, as its firmware, iPXE and the Proxmox installer
// would: a broadcast DISCOVER, the TFTP download of the boot file the
// proxy offer names, the iPXE script, and, with SystemInfo, the answer.
type PXEClient struct {
	// MAC is the machine's hardware address.
	MAC string
	// HTTPPort is the window's HTTP port on the offer's next-server.
	HTTPPort int
	// SystemInfo, when set, is posted to /answer as the installer does.
	SystemInfo []byte
	// Wait bounds each step.
	Wait time.Duration
}

// PXEResult is what a [PXEClient] saw.
type PXEResult struct {
	// OfferFile and NextServer are the boot file and next-server of the
	// proxy offer.
	OfferFile  string `json:"offer_file"`
	NextServer string `json:"next_server"`
	// TFTPBytes is the size of the boot file downloaded by TFTP.
	TFTPBytes int64 `json:"tftp_bytes"`
	// Script is the iPXE script's body.
	Script string `json:"script"`
	// Answer and AnswerCode are the body and status of POST /answer;
	// empty and 0 without SystemInfo.
	Answer     string `json:"answer"`
	AnswerCode int    `json:"answer_code"`
	// Errors holds the failure of the step that ended the boot, if any.
	Errors []string `json:"errors"`
}

// Boot runs the client's steps, each only after the one before it
// succeeded, and reports what it saw.
func (c PXEClient) Boot() PXEResult {
	var r PXEResult
	fail := func(format string, args ...any) PXEResult {
		r.Errors = append(r.Errors, fmt.Sprintf(format, args...))
		return r
	}
	mac, err := net.ParseMAC(c.MAC)
	if err != nil {
		return fail("mac: %v", err)
	}
	r.OfferFile, r.NextServer, err = c.discover(mac)
	if err != nil {
		return fail("%v", err)
	}
	tc, err := tftp.NewClient(net.JoinHostPort(r.NextServer, "69"))
	if err != nil {
		return fail("tftp: %v", err)
	}
	tc.SetTimeout(c.Wait / 3)
	wt, err := tc.Receive(r.OfferFile, "octet")
	if err != nil {
		return fail("tftp %s: %v", r.OfferFile, err)
	}
	if r.TFTPBytes, err = wt.WriteTo(io.Discard); err != nil {
		return fail("tftp %s: %v", r.OfferFile, err)
	}
	base := "http://" + net.JoinHostPort(r.NextServer, strconv.Itoa(c.HTTPPort))
	hc := &http.Client{Timeout: c.Wait}
	resp, err := hc.Get(base + "/boot.ipxe?mac=" + c.MAC + "&platform=efi")
	if err != nil {
		return fail("script: %v", err)
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	r.Script = string(b)
	if c.SystemInfo == nil {
		return r
	}
	resp, err = hc.Post(base+"/answer", "application/json", bytes.NewReader(c.SystemInfo))
	if err != nil {
		return fail("answer: %v", err)
	}
	b, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	r.Answer, r.AnswerCode = string(b), resp.StatusCode
	return r
}

// discover broadcasts a PXE DISCOVER until a proxy offer comes, and
// returns its boot file and next-server.
func (c PXEClient) discover(mac net.HardwareAddr) (file, next string, err error) {
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_BROADCAST, 1) }); err != nil {
			return err
		}
		return serr
	}}
	pc, err := lc.ListenPacket(context.Background(), "udp4", ":68")
	if err != nil {
		return "", "", fmt.Errorf("listen on port 68: %w", err)
	}
	defer pc.Close()
	req, err := dhcpv4.NewDiscovery(mac,
		dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00007:UNDI:003016")),
		dhcpv4.WithOption(dhcpv4.OptClientArch(iana.EFI_X86_64)),
		dhcpv4.WithBroadcast(true))
	if err != nil {
		return "", "", fmt.Errorf("discover: %w", err)
	}
	buf := make([]byte, 1500)
	for deadline := time.Now().Add(c.Wait); time.Now().Before(deadline); {
		pc.WriteTo(req.ToBytes(), &net.UDPAddr{IP: net.IPv4bcast, Port: 67})
		pc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		for {
			n, _, err := pc.ReadFrom(buf)
			if err != nil {
				break
			}
			if o, err := dhcpv4.FromBytes(buf[:n]); err == nil && o.TransactionID == req.TransactionID && o.MessageType() == dhcpv4.MessageTypeOffer {
				return o.BootFileName, o.ServerIPAddr.String(), nil
			}
		}
	}
	return "", "", fmt.Errorf("no proxy offer within %s", c.Wait)
}
