package tftp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"time"
)

// TFTP opcodes (RFC 1350, RFC 2347).
const (
	opRRQ   = 1
	opWRQ   = 2
	opDATA  = 3
	opACK   = 4
	opERROR = 5
	opOACK  = 6
)

// Option bounds (RFC 2348, RFC 2349).
const (
	defaultBlockSize = 512
	minBlockSize     = 8
	maxBlockSize     = 65464
	// maxRequest is the longest request read; a longer one is cut short.
	maxRequest = 2048
)

// Transfer timing.
const (
	// DefaultTimeout is how long a transfer waits for an acknowledgement
	// before it sends its block again, unless the client asks for
	// another (RFC 2349 timeout): one second, as tftpd-hpa.
	DefaultTimeout = time.Second
	// Retries is how many times a block is sent again before its client
	// counts as gone: with the default timeout a transfer whose client
	// went away ends, and frees its socket, after about 6 s.
	Retries = 5
)

// request is a parsed read or write request.
type request struct {
	op   uint16
	name string
	mode string
	// Options asked for, as the client spelled their names (lower case
	// here), and the order to answer them in.
	blksize, timeout, tsize string
	order                   []string
}

var errMalformed = errors.New("malformed request")

// parseRequest reads an RRQ or WRQ: name, mode and option pairs, each
// ended by a NUL. A NUL thus ends the name: what follows is the mode.
func parseRequest(p []byte) (request, error) {
	if len(p) < 2 {
		return request{}, errMalformed
	}
	r := request{op: binary.BigEndian.Uint16(p)}
	fields := bytes.Split(p[2:], []byte{0})
	// The last field is what follows the last NUL: empty when the
	// packet is well formed.
	if len(fields) < 3 || len(fields[len(fields)-1]) != 0 {
		return request{}, errMalformed
	}
	fields = fields[:len(fields)-1]
	r.name, r.mode = string(fields[0]), strings.ToLower(string(fields[1]))
	for i := 2; i+1 < len(fields); i += 2 {
		k, v := strings.ToLower(string(fields[i])), string(fields[i+1])
		switch k {
		case "blksize":
			r.blksize = v
		case "timeout":
			r.timeout = v
		case "tsize":
			r.tsize = v
		default:
			continue // unknown options are not answered (RFC 2347)
		}
		r.order = append(r.order, k)
	}
	return r, nil
}

// negotiate answers r's options for a file of size (negative: unknown)
// with at most maxBlock bytes a block: the block size and timeout taken,
// and the OACK to send, nil when no option is answered.
func negotiate(r request, size int64, maxBlock int) (block int, timeout time.Duration, oack []byte) {
	block, timeout = defaultBlockSize, DefaultTimeout
	var answer [][2]string
	for _, k := range r.order {
		switch k {
		case "blksize":
			n, err := strconv.Atoi(r.blksize)
			if err != nil || n < minBlockSize {
				continue
			}
			block = min(n, maxBlockSize, maxBlock)
			answer = append(answer, [2]string{k, strconv.Itoa(block)})
		case "timeout":
			n, err := strconv.Atoi(r.timeout)
			if err != nil || n < 1 || n > 255 {
				continue
			}
			timeout = time.Duration(n) * time.Second
			answer = append(answer, [2]string{k, r.timeout})
		case "tsize":
			if size < 0 {
				continue
			}
			answer = append(answer, [2]string{k, strconv.FormatInt(size, 10)})
		}
	}
	if len(answer) == 0 {
		return block, timeout, nil
	}
	oack = []byte{0, opOACK}
	for _, a := range answer {
		oack = append(append(append(append(oack, a[0]...), 0), a[1]...), 0)
	}
	return block, timeout, oack
}

// errorPacket is an ERROR packet carrying msg. Its code is 1, as the
// TFTP library this server replaced sent for every refusal.
func errorPacket(msg string) []byte {
	p := []byte{0, opERROR, 0, 1}
	return append(append(p, msg...), 0)
}
