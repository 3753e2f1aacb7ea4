// Package tftpget is the TFTP client of the benchmark tools: one read
// request from a local address of the caller's choice (an emulated
// machine's own), lock step, as PXE firmware fetches its boot file. It
// is not a test and not part of the SDK.
package tftpget

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"time"
)

// Options of a read.
type Options struct {
	// Local is the address to send from; the zero Addr lets the kernel
	// choose.
	Local netip.Addr
	// BlockSize is the blksize option asked for; 0 asks for none (512).
	BlockSize int
	// Timeout is how long to wait for each packet before sending the
	// last one again, Retries how many times.
	Timeout time.Duration
	Retries int
}

// Get reads file from server into w and returns the bytes read.
func Get(server netip.AddrPort, file string, o Options, w io.Writer) (int64, error) {
	conn, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(o.Local, 0)))
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	rrq := binary.BigEndian.AppendUint16(nil, 1)
	rrq = append(append(rrq, file...), 0)
	rrq = append(rrq, "octet\x00"...)
	block := 512
	if o.BlockSize > 0 {
		rrq = append(rrq, "blksize\x00"+strconv.Itoa(o.BlockSize)+"\x00"...)
	}
	buf := make([]byte, 4+max(block, o.BlockSize))
	last, to := rrq, server // what to send again on a timeout, and where
	var tid netip.AddrPort
	var n int64
	want := uint16(1)
	if _, err := conn.WriteToUDPAddrPort(last, to); err != nil {
		return 0, err
	}
	tries := 0
	for {
		conn.SetReadDeadline(time.Now().Add(o.Timeout))
		m, from, err := conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				return n, err
			}
			if tries++; tries > o.Retries {
				return n, fmt.Errorf("timeout waiting for block %d after %d tries", want, tries)
			}
			if _, err := conn.WriteToUDPAddrPort(last, to); err != nil {
				return n, err
			}
			continue
		}
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		if m < 4 {
			continue
		}
		if !tid.IsValid() {
			tid = from
		} else if from != tid {
			continue
		}
		op, num := binary.BigEndian.Uint16(buf), binary.BigEndian.Uint16(buf[2:])
		ack := func(b uint16) error {
			last, to = []byte{0, 4, byte(b >> 8), byte(b)}, tid
			_, err := conn.WriteToUDPAddrPort(last, to)
			return err
		}
		switch op {
		case 6: // OACK: blksize accepted
			block = o.BlockSize
			if err := ack(0); err != nil {
				return n, err
			}
		case 3: // DATA
			if num != want {
				if num == want-1 {
					ack(num) //nolint:errcheck // the client's resend of a lost ACK
				}
				continue
			}
			tries = 0
			if _, err := w.Write(buf[4:m]); err != nil {
				return n, err
			}
			n += int64(m - 4)
			if err := ack(num); err != nil {
				return n, err
			}
			if m-4 < block {
				return n, nil
			}
			want++
		case 5: // ERROR
			return n, fmt.Errorf("server error %d: %s", num, buf[4:m])
		}
	}
}
