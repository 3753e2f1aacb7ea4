package bootassets

// The initramfs side of prepare: a writer of newc ("070701") cpio entries,
// and a reader that walks an initrd the way the kernel unpacks it
// (https://docs.kernel.org/driver-api/early-userspace/buffer-format.html):
// a sequence of cpio archives, each plain or compressed, with zero bytes
// between them.

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
)

const (
	newcMagic    = "070701"
	newcCRCMagic = "070702"
	newcHeader   = 110
	newcTrailer  = "TRAILER!!!"
	// newcMaxSize is the largest file a newc entry can hold: its size
	// field has 8 hex digits.
	newcMaxSize = 1<<32 - 1
	// newcMaxName caps a name's length (PATH_MAX).
	newcMaxName = 4096
)

// errUnsupportedInitrd is returned when an initrd is compressed in a way
// this package cannot read (xz, lzma, bzip2, lz4, lzo; or zstd while no
// zstd command is installed), or is not an initramfs at all.
var errUnsupportedInitrd = errors.New("unsupported initrd format")

// errStopScan ends a scan early without an error.
var errStopScan = errors.New("stop scan")

// newcEntry describes one entry to write.
type newcEntry struct {
	Name string
	Mode uint32 // type and permission bits, for example 0o100644
	Size int64
	// RdevMajor and RdevMinor are a device node's numbers.
	RdevMajor, RdevMinor uint32
}

// newcWriter writes one newc archive. Its output starts at a 4-byte
// aligned offset of the initrd, so padding is relative to its own start.
type newcWriter struct {
	w   io.Writer
	n   int64
	ino uint32
}

func (c *newcWriter) write(b []byte) error {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return err
}

func (c *newcWriter) pad() error {
	if r := c.n % 4; r != 0 {
		return c.write(make([]byte, 4-r))
	}
	return nil
}

func (c *newcWriter) header(e newcEntry, nlink uint32) error {
	if e.Size < 0 || e.Size > newcMaxSize {
		return fmt.Errorf("cpio entry %s: %d bytes is more than newc's limit of %d (4 GiB)", e.Name, e.Size, int64(newcMaxSize))
	}
	if e.Name == "" || len(e.Name) >= newcMaxName || strings.IndexByte(e.Name, 0) >= 0 {
		return fmt.Errorf("cpio entry name %q: want 1 to %d bytes without NUL", e.Name, newcMaxName-1)
	}
	c.ino++
	ino := c.ino
	if e.Name == newcTrailer {
		ino = 0
	}
	fields := []uint32{ino, e.Mode, 0, 0, nlink, 0, uint32(e.Size), 0, 0, e.RdevMajor, e.RdevMinor, uint32(len(e.Name) + 1), 0}
	var b strings.Builder
	b.WriteString(newcMagic)
	for _, f := range fields {
		fmt.Fprintf(&b, "%08X", f)
	}
	b.WriteString(e.Name)
	b.WriteByte(0)
	if err := c.write([]byte(b.String())); err != nil {
		return err
	}
	return c.pad()
}

// file writes the entry e with e.Size bytes read from body.
func (c *newcWriter) file(e newcEntry, body io.Reader) error {
	if err := c.header(e, 1); err != nil {
		return err
	}
	n, err := io.Copy(writerFunc(c.write), io.LimitReader(body, e.Size))
	if err != nil {
		return fmt.Errorf("cpio entry %s: %w", e.Name, err)
	}
	if n != e.Size {
		return fmt.Errorf("cpio entry %s: got %d of %d bytes: %w", e.Name, n, e.Size, io.ErrUnexpectedEOF)
	}
	return c.pad()
}

// close writes the trailer entry.
func (c *newcWriter) close() error {
	return c.header(newcEntry{Name: newcTrailer}, 1)
}

type writerFunc func([]byte) error

func (f writerFunc) Write(b []byte) (int, error) {
	if err := f(b); err != nil {
		return 0, err
	}
	return len(b), nil
}

// cpioFile is one entry met while scanning.
type cpioFile struct {
	Name  string // as stored, "./" and leading "/" dropped
	Mode  uint32
	Size  int64
	Nlink uint32
}

// isRegular reports whether the entry is a regular file.
func (f cpioFile) isRegular() bool { return f.Mode&0o170000 == 0o100000 }

// readNewcArchive reads entries from br up to and including the trailer,
// calling fn for each entry with a reader of its body. fn may leave the
// body unread. An error from fn ends the walk and is returned.
func readNewcArchive(br *bufio.Reader, fn func(cpioFile, io.Reader) error) error {
	var off int64 // relative to the archive start, for padding
	skip := func(n int64) error {
		m, err := io.CopyN(io.Discard, br, n)
		off += m
		if err != nil {
			return fmt.Errorf("cpio: %w", noEOF(err))
		}
		return nil
	}
	pad := func() error {
		if r := off % 4; r != 0 {
			return skip(4 - r)
		}
		return nil
	}
	var hdr [newcHeader]byte
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return fmt.Errorf("cpio header: %w", noEOF(err))
		}
		off += newcHeader
		magic := string(hdr[:6])
		if magic != newcMagic && magic != newcCRCMagic {
			return fmt.Errorf("cpio header: magic %q, want %s: %w", magic, newcMagic, errUnsupportedInitrd)
		}
		var f [13]uint32
		for i := range f {
			v, err := strconv.ParseUint(string(hdr[6+8*i:14+8*i]), 16, 32)
			if err != nil {
				return fmt.Errorf("cpio header field %d %q: not 8 hex digits", i, hdr[6+8*i:14+8*i])
			}
			f[i] = uint32(v)
		}
		nameSize := int64(f[11])
		if nameSize < 1 || nameSize > newcMaxName {
			return fmt.Errorf("cpio header: name size %d, want 1 to %d", nameSize, newcMaxName)
		}
		name := make([]byte, nameSize)
		if _, err := io.ReadFull(br, name); err != nil {
			return fmt.Errorf("cpio name: %w", noEOF(err))
		}
		off += nameSize
		if err := pad(); err != nil {
			return err
		}
		n := string(bytes.TrimRight(name, "\x00"))
		size := int64(f[6])
		if n == newcTrailer {
			return nil
		}
		n = strings.TrimLeft(strings.TrimPrefix(n, "./"), "/")
		body := &io.LimitedReader{R: br, N: size}
		if err := fn(cpioFile{Name: n, Mode: f[1], Size: size, Nlink: f[4]}, body); err != nil {
			return err
		}
		off += size - body.N
		if err := skip(body.N); err != nil {
			return err
		}
		if err := pad(); err != nil {
			return err
		}
	}
}

func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// initrdCompression names the format starting with magic, "" for a plain
// cpio archive, or an error wrapping [errUnsupportedInitrd].
func initrdCompression(magic []byte) (string, error) {
	switch {
	case bytes.HasPrefix(magic, []byte(newcMagic)), bytes.HasPrefix(magic, []byte(newcCRCMagic)):
		return "", nil
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		return "gzip", nil
	case bytes.HasPrefix(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return "zstd", nil
	}
	name := ""
	switch {
	case bytes.HasPrefix(magic, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
		name = "xz"
	case bytes.HasPrefix(magic, []byte{0x5d, 0, 0}):
		name = "lzma"
	case bytes.HasPrefix(magic, []byte("BZh")):
		name = "bzip2"
	case bytes.HasPrefix(magic, []byte{0x02, 0x21, 0x4c, 0x18}), bytes.HasPrefix(magic, []byte{0x04, 0x22, 0x4d, 0x18}):
		name = "lz4"
	case bytes.HasPrefix(magic, []byte{0x89, 'L', 'Z', 'O'}):
		name = "lzo"
	default:
		return "", fmt.Errorf("initrd data starting % x is neither a cpio archive nor gzip or zstd: %w", magic, errUnsupportedInitrd)
	}
	return "", fmt.Errorf("%s-compressed initrd: only gzip and zstd can be read: %w", name, errUnsupportedInitrd)
}

// initrdScanner walks an initrd.
type initrdScanner struct {
	// zstd is the path of a zstd command, or "" when none is installed.
	zstd string
}

// scan walks the initrd r in the kernel's order and calls fn for every
// entry. fn returning errStopScan ends the walk without an error.
func (s initrdScanner) scan(ctx context.Context, r io.Reader, fn func(cpioFile, io.Reader) error) error {
	err := s.scanOuter(ctx, bufio.NewReaderSize(ctxReader{ctx, r}, 64<<10), fn)
	if errors.Is(err, errStopScan) {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return err
}

func (s initrdScanner) scanOuter(ctx context.Context, br *bufio.Reader, fn func(cpioFile, io.Reader) error) error {
	for {
		if err := skipZeros(br); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		magic, _ := br.Peek(6)
		kind, err := initrdCompression(magic)
		if err != nil {
			return err
		}
		switch kind {
		case "":
			if err := readNewcArchive(br, fn); err != nil {
				return err
			}
		case "gzip":
			gz, err := gzip.NewReader(br)
			if err != nil {
				return fmt.Errorf("initrd gzip: %w", err)
			}
			gz.Multistream(false)
			if err := scanPlain(bufio.NewReaderSize(gz, 64<<10), fn); err != nil {
				return fmt.Errorf("initrd gzip part: %w", err)
			}
			// Drain to the end of the member so that its trailer is read.
			if _, err := io.Copy(io.Discard, gz); err != nil {
				return fmt.Errorf("initrd gzip: %w", err)
			}
		case "zstd":
			// The zstd part is the last: the command reads the rest.
			return s.scanZstd(ctx, br, fn)
		}
	}
}

// scanPlain walks the uncompressed archives of a decompressed stream.
func scanPlain(br *bufio.Reader, fn func(cpioFile, io.Reader) error) error {
	for {
		if err := skipZeros(br); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := readNewcArchive(br, fn); err != nil {
			return err
		}
	}
}

func (s initrdScanner) scanZstd(ctx context.Context, br *bufio.Reader, fn func(cpioFile, io.Reader) error) error {
	if s.zstd == "" {
		return fmt.Errorf("zstd-compressed initrd: no zstd command found (Debian package zstd): %w", errUnsupportedInitrd)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(cctx, s.zstd, "-dcq")
	cmd.Stdin = br
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("zstd: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("zstd: %w", err)
	}
	serr := scanPlain(bufio.NewReaderSize(out, 64<<10), fn)
	if serr != nil {
		cancel()
		serr = fmt.Errorf("initrd zstd part: %w", serr)
	}
	_, _ = io.Copy(io.Discard, out)
	werr := cmd.Wait()
	if serr != nil {
		return serr
	}
	if werr != nil {
		// zstd complains about bytes after the last frame (zero padding,
		// an appended archive) only once it has decompressed every frame;
		// the archives read by then stand.
		if strings.Contains(stderr.String(), "unknown header") || strings.Contains(stderr.String(), "unsupported format") {
			return nil
		}
		return fmt.Errorf("zstd: %w: %s", werr, firstLine(stderr.String()))
	}
	return nil
}

// skipZeros drops zero bytes; it returns io.EOF at the end of input.
func skipZeros(br *bufio.Reader) error {
	for {
		b, err := br.Peek(1)
		if err != nil {
			return err
		}
		if b[0] != 0 {
			return nil
		}
		buf, _ := br.Peek(br.Buffered())
		n := 0
		for n < len(buf) && buf[n] == 0 {
			n++
		}
		if _, err := br.Discard(n); err != nil {
			return err
		}
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// ctxReader fails reads once its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
