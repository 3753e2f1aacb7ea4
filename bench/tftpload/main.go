// Command tftpload fetches one file from a TFTP server with many clients
// at once and reports the total time and the failures as JSON. It is a
// benchmark tool for bench/run.sh, not a test.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/pin/tftp/v3"
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
	flag.Parse()
	if *addr == "" || *file == "" {
		fmt.Fprintln(os.Stderr, "tftpload: -addr and -file are required")
		os.Exit(2)
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
		wg.Go(func() {
			c, err := tftp.NewClient(*addr)
			if err != nil {
				fail("client %d: %v", i, err)
				return
			}
			c.SetTimeout(*timeout)
			c.SetRetries(*retries)
			c.SetBlockSize(*blksize)
			<-begin
			wt, err := c.Receive(*file, "octet")
			if err != nil {
				fail("client %d: receive: %v", i, err)
				return
			}
			n, err := wt.WriteTo(io.Discard)
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
