// Command tftpload fetches one file from a TFTP server with many clients
// at once and reports the total time and the failures as JSON. It is a
// benchmark tool for bench/run.sh, not a test.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/bench/internal/tftpget"
)

// result is what one run reports.
type result struct {
	Clients  int      `json:"clients"`
	OK       int      `json:"ok"`
	Failures int      `json:"failures"`
	Seconds  float64  `json:"seconds"`
	MiBps    float64  `json:"mib_per_second"`
	Errors   []string `json:"errors,omitempty"`
}

func main() {
	addr := flag.String("addr", "", "server host:port")
	file := flag.String("file", "", "file to fetch")
	size := flag.Int64("size", 0, "expected size in bytes (0: not checked)")
	clients := flag.Int("c", 200, "clients fetching at once")
	blksize := flag.Int("blksize", 1468, "TFTP block size to ask for (RFC 2348)")
	timeout := flag.Duration("timeout", 2*time.Second, "per-packet timeout")
	retries := flag.Int("retries", 5, "retransmissions per packet")
	sources := flag.String("sources", "", "each client sends from its own address: host addresses 1..c of this prefix (they must be on the client's interface); empty: all from one")
	flag.Parse()
	server, err := netip.ParseAddrPort(*addr)
	if err != nil || *file == "" {
		fmt.Fprintln(os.Stderr, "tftpload: -addr (IPv4 address:port) and -file are required")
		os.Exit(2)
	}
	var prefix netip.Prefix
	if *sources != "" {
		if prefix, err = netip.ParsePrefix(*sources); err != nil || !prefix.Addr().Is4() {
			fmt.Fprintf(os.Stderr, "tftpload: -sources %q: want an IPv4 prefix such as 10.79.0.0/16\n", *sources)
			os.Exit(2)
		}
	}
	var (
		mu    sync.Mutex
		r     = result{Clients: *clients}
		wg    sync.WaitGroup
		begin = make(chan struct{})
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		r.Failures++
		if len(r.Errors) < 10 {
			r.Errors = append(r.Errors, fmt.Sprintf(format, args...))
		}
	}
	for i := range *clients {
		o := tftpget.Options{BlockSize: *blksize, Timeout: *timeout, Retries: *retries}
		if prefix.IsValid() {
			o.Local = hostAddr(prefix, i)
		}
		wg.Go(func() {
			<-begin
			n, err := tftpget.Get(server, *file, o, io.Discard)
			if err != nil {
				fail("client %d: after %d bytes: %v", i, n, err)
				return
			}
			if *size > 0 && n != *size {
				fail("client %d: got %d bytes, want %d", i, n, *size)
				return
			}
			mu.Lock()
			r.OK++
			mu.Unlock()
		})
	}
	start := time.Now()
	close(begin)
	wg.Wait()
	r.Seconds = time.Since(start).Seconds()
	if *size > 0 && r.Seconds > 0 {
		r.MiBps = float64(r.OK) * float64(*size) / (1 << 20) / r.Seconds
	}
	json.NewEncoder(os.Stdout).Encode(r)
}

// hostAddr is host address i+1 of p.
func hostAddr(p netip.Prefix, i int) netip.Addr {
	a := p.Masked().Addr().As4()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v += uint32(i) + 1
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}
