package bootassets

// An ISO 9660 writer that adds files to an image without copying it: the
// composed image is the base image's bytes, with its volume descriptors
// replaced (a small head) and a new root directory, path tables and the
// added files' data appended after its end (a small tail), as xorriso's
// growing mode lays out a new session. Every file of the base keeps its
// extent, so the boot setup (El Torito catalog and images, the system
// area's MBR and GPT) and the volume's dates, which GRUB takes as the
// volume UUID, are unchanged.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf16"
)

// isoAnswerFile is where the installer's --fetch-from iso mode reads the
// answer (reference §3.2: /cdrom/answer.toml).
const isoAnswerFile = "/answer.toml"

// maxComposedFile bounds one file added to a composed ISO: 1 MiB, the
// size the installer allows a first-boot executable, far above an
// answer's.
const maxComposedFile = 1 << 20

// ComposedISO is an ISO 9660 image made of a base image and a few files
// added to its root directory, read through [ComposedISO.ReadAt] without
// the base being copied: only its volume descriptors and a tail of a few
// sectors are held in memory. Safe for concurrent reads when the base
// is.
type ComposedISO struct {
	base     io.ReaderAt
	baseSize int64
	head     []byte // replaces the bytes from headOff
	tail     []byte // starts at tailOff
	tailOff  int64
}

// headOff is where the volume descriptors start: sector 16.
const headOff = 16 * isoSector

// Size is the composed image's size in bytes, a whole number of sectors.
func (c *ComposedISO) Size() int64 { return c.tailOff + int64(len(c.tail)) }

// ReadAt reads the composed image at off: the head and tail from memory,
// the rest from the base (zeros between the base's end and the next
// sector). It returns io.EOF past the end, as a file does.
func (c *ComposedISO) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("composed ISO: negative offset")
	}
	n := 0
	for n < len(p) {
		at := off + int64(n)
		if at >= c.Size() {
			return n, io.EOF
		}
		var src []byte
		var end int64
		switch {
		case at >= c.tailOff:
			src, end = c.tail[at-c.tailOff:], c.Size()
		case at >= headOff && at < headOff+int64(len(c.head)):
			src, end = c.head[at-headOff:], headOff+int64(len(c.head))
		case at >= c.baseSize:
			end = c.tailOff
		default:
			end = c.baseSize
			if at < headOff {
				end = headOff
			}
		}
		want := min(int64(len(p)-n), end-at)
		switch {
		case src != nil:
			copy(p[n:n+int(want)], src)
		case at >= c.baseSize:
			clear(p[n : n+int(want)])
		default:
			if _, err := c.base.ReadAt(p[n:n+int(want)], at); err != nil {
				return n, fmt.Errorf("composed ISO: read the base at %d: %w", at, err)
			}
		}
		n += int(want)
	}
	return n, nil
}

// ComposeAnswerISO composes the ISO an installer booted from it answers
// itself from (prepare-iso --fetch-from iso): the base image (a prepared
// or generic release ISO of Proxmox VE version, such as "9.2") with
// /answer.toml holding answer and an /auto-installer-mode.toml of mode
// "iso" in place of the base's. Nothing of the base is copied or changed.
func ComposeAnswerISO(base io.ReaderAt, size int64, version string, answer []byte, mtime time.Time) (*ComposedISO, error) {
	return composeISO(base, size, map[string][]byte{
		isoAnswerFile: answer,
		isoModeFile:   renderMode("iso", version, "", "", ""),
	}, mtime)
}

// composeISO adds files (by absolute path in the root directory) to the
// base image, replacing base files of the same names, in both the
// primary (Rock Ridge, when the base has it) and the Joliet tree.
func composeISO(base io.ReaderAt, size int64, files map[string][]byte, mtime time.Time) (*ComposedISO, error) {
	im, err := openISO(base, size)
	if err != nil {
		return nil, fmt.Errorf("compose ISO: %w", err)
	}
	names := make([]string, 0, len(files))
	for p, data := range files {
		name := strings.TrimPrefix(p, "/")
		if name == "" || strings.ContainsAny(name, "/;\x00") || len(name) > 100 {
			return nil, fmt.Errorf("compose ISO: %q: only a file of the root directory can be added", p)
		}
		if len(data) > maxComposedFile {
			return nil, fmt.Errorf("compose ISO: %s is %d bytes, more than %d", p, len(data), maxComposedFile)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	c := &ComposedISO{base: base, baseSize: size}
	c.tailOff = (size + isoSector - 1) / isoSector * isoSector
	w := &tailWriter{lba: uint32(c.tailOff / isoSector)}

	// The added files' data first: its LBAs are needed in the records.
	data := map[string]uint32{}
	for _, n := range names {
		data[n] = w.put(files["/"+n])
	}

	descs, err := readDescriptors(base, size)
	if err != nil {
		return nil, fmt.Errorf("compose ISO: %w", err)
	}
	for i, d := range descs {
		joliet := d[0] == 2 && d[88] == '%' && d[89] == '/' && (d[90] == '@' || d[90] == 'C' || d[90] == 'E')
		if d[0] != 1 && !joliet {
			continue
		}
		if d[0] == 1 && i != slices.IndexFunc(descs, func(d []byte) bool { return d[0] == 1 }) {
			continue // a second primary descriptor: readers take the first
		}
		nd, err := im.recompose(d, joliet, w, names, files, data, mtime)
		if err != nil {
			return nil, fmt.Errorf("compose ISO: %w", err)
		}
		descs[i] = nd
	}
	total := uint32((c.tailOff + int64(len(w.buf))) / isoSector)
	for _, d := range descs {
		if d[0] == 1 || d[0] == 2 {
			putBoth32(d[80:], total) // volume space size
		}
	}
	c.head = bytes.Join(descs, nil)
	c.tail = w.buf
	return c, nil
}

// readDescriptors returns the volume descriptors from sector 16 up to
// and including the terminator, each a copy of its sector.
func readDescriptors(r io.ReaderAt, size int64) ([][]byte, error) {
	var out [][]byte
	for s := int64(16); s < 16+64 && (s+1)*isoSector <= size; s++ {
		d := make([]byte, isoSector)
		if _, err := r.ReadAt(d, s*isoSector); err != nil {
			return nil, fmt.Errorf("read volume descriptor %d: %w", s, err)
		}
		if string(d[1:6]) != "CD001" {
			break
		}
		out = append(out, d)
		if d[0] == 255 {
			return out, nil
		}
	}
	return nil, errors.New("no volume descriptor set terminator")
}

// recompose returns a copy of the volume descriptor d whose root
// directory is a new one in the tail: the base root's records without
// those named like an added file, plus a record for each added file, and
// path tables naming the new root.
func (im *isoImage) recompose(d []byte, joliet bool, w *tailWriter, names []string, files map[string][]byte, data map[string]uint32, mtime time.Time) ([]byte, error) {
	root, _, err := parseISORecord(d[156:190], joliet)
	if err != nil || !root.dir || root.length > isoMaxDirSize || int64(root.lba)*isoSector+int64(root.length) > im.size {
		return nil, fmt.Errorf("root directory record: %v", err)
	}
	raw := make([]byte, root.length)
	if _, err := im.r.ReadAt(raw, int64(root.lba)*isoSector); err != nil {
		return nil, fmt.Errorf("read the root directory: %w", err)
	}
	var self, parent []byte
	var kept [][]byte
	ce := isoMaxCEBytes
	for sec := 0; sec < len(raw); sec += isoSector {
		end := min(sec+isoSector, len(raw))
		for i := sec; i < end; {
			l := int(raw[i])
			if l == 0 {
				break
			}
			if l < 34 || i+l > end {
				return nil, fmt.Errorf("root directory: malformed record at byte %d", i)
			}
			rec := slices.Clone(raw[i : i+l])
			i += l
			r, su, err := parseISORecord(rec, joliet)
			if err != nil {
				return nil, err
			}
			switch {
			case r.name == "." && self == nil:
				self = rec
				continue
			case r.name == ".." && parent == nil:
				parent = rec
				continue
			}
			name := r.name
			if !joliet {
				if n := im.rockRidgeName(su, &ce); n != "" {
					name = n
				}
			}
			if slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, name) }) {
				continue // replaced by the added file
			}
			kept = append(kept, rec)
		}
	}
	if self == nil || parent == nil {
		return nil, errors.New("root directory: no . or .. record")
	}
	for _, n := range names {
		kept = append(kept, newRecord(n, data[n], uint32(len(files["/"+n])), joliet, im.susp && !joliet, mtime))
	}
	slices.SortStableFunc(kept, func(a, b []byte) int { return bytes.Compare(recordID(a), recordID(b)) })
	// Lay the records out in sectors (a record never crosses one) to
	// learn the directory's size, then write it with . and .. naming it.
	size := 0
	for _, r := range append([][]byte{self, parent}, kept...) {
		if size%isoSector+len(r) > isoSector {
			size += isoSector - size%isoSector
		}
		size += len(r)
	}
	size = (size + isoSector - 1) / isoSector * isoSector
	lba := w.next()
	for _, r := range [][]byte{self, parent} {
		putBoth32(r[2:], lba)
		putBoth32(r[10:], uint32(size))
	}
	dir := make([]byte, 0, size)
	for _, r := range append([][]byte{self, parent}, kept...) {
		if len(dir)%isoSector+len(r) > isoSector {
			dir = append(dir, make([]byte, isoSector-len(dir)%isoSector)...)
		}
		dir = append(dir, r...)
	}
	dir = append(dir, make([]byte, size-len(dir))...)
	if got := w.put(dir); got != lba {
		return nil, errors.New("root directory: misplaced")
	}
	nd := slices.Clone(d)
	copy(nd[156:190], self[:34])
	nd[156] = 34 // the descriptor's copy carries no system use area
	if err := im.movePathTables(nd, lba, w); err != nil {
		return nil, err
	}
	return nd, nil
}

// movePathTables writes copies of d's type L and type M path tables, with
// the root's entry naming lba, into the tail and points d at them (the
// optional copies are dropped).
func (im *isoImage) movePathTables(d []byte, lba uint32, w *tailWriter) error {
	size := binary.LittleEndian.Uint32(d[132:])
	if size < 10 || size > isoMaxDirSize {
		return fmt.Errorf("path table of %d bytes", size)
	}
	for _, t := range []struct {
		at    int
		order binary.ByteOrder
	}{{140, binary.LittleEndian}, {148, binary.BigEndian}} {
		pt := make([]byte, size)
		if _, err := im.r.ReadAt(pt, int64(t.order.Uint32(d[t.at:]))*isoSector); err != nil {
			return fmt.Errorf("read a path table: %w", err)
		}
		t.order.PutUint32(pt[2:], lba) // the first entry is the root
		t.order.PutUint32(d[t.at:], w.put(pt))
		clear(d[t.at+4 : t.at+8])
	}
	return nil
}

// recordID is the file identifier of the raw directory record r, the
// key records are sorted by.
func recordID(r []byte) []byte { return r[33 : 33+int(r[32])] }

// newRecord returns the directory record of an added file: its ISO
// identifier (upper case with ";1"; UCS-2 in a Joliet tree) and, where the
// tree has Rock Ridge, its PX and NM entries with the exact name.
func newRecord(name string, lba, size uint32, joliet, rockRidge bool, mtime time.Time) []byte {
	var id []byte
	if joliet {
		for _, u := range utf16.Encode([]rune(name)) {
			id = binary.BigEndian.AppendUint16(id, u)
		}
	} else {
		id = []byte(strings.ToUpper(name) + ";1")
	}
	r := make([]byte, 33, 256)
	putBoth32(r[2:], lba)
	putBoth32(r[10:], size)
	t := mtime.UTC()
	copy(r[18:25], []byte{byte(t.Year() - 1900), byte(t.Month()), byte(t.Day()), byte(t.Hour()), byte(t.Minute()), byte(t.Second()), 0})
	binary.LittleEndian.PutUint16(r[28:], 1) // volume sequence number
	binary.BigEndian.PutUint16(r[30:], 1)
	r[32] = byte(len(id))
	r = append(r, id...)
	if len(id)%2 == 0 {
		r = append(r, 0)
	}
	if rockRidge {
		px := make([]byte, 36)
		copy(px, "PX")
		px[2], px[3] = 36, 1
		putBoth32(px[4:], 0o100444) // a regular file, read-only
		putBoth32(px[12:], 1)       // links
		r = append(r, px...)
		r = append(r, 'N', 'M', byte(5+len(name)), 1, 0)
		r = append(r, name...)
	}
	if len(r)%2 == 1 {
		r = append(r, 0)
	}
	r[0] = byte(len(r))
	return r
}

// putBoth32 writes v in both byte orders, as ISO 9660 keeps numbers.
func putBoth32(b []byte, v uint32) {
	binary.LittleEndian.PutUint32(b, v)
	binary.BigEndian.PutUint32(b[4:], v)
}

// tailWriter lays out the sectors appended after the base.
type tailWriter struct {
	lba uint32 // of the tail's first sector
	buf []byte
}

// next is the LBA the next put starts at.
func (w *tailWriter) next() uint32 { return w.lba + uint32(len(w.buf)/isoSector) }

// put appends b padded to whole sectors and returns its first LBA.
func (w *tailWriter) put(b []byte) uint32 {
	at := w.next()
	w.buf = append(w.buf, b...)
	if r := len(w.buf) % isoSector; r != 0 || len(b) == 0 {
		w.buf = append(w.buf, make([]byte, (isoSector-r)%isoSector)...)
	}
	return at
}
