package bootassets

// A minimal read-only ISO 9660 reader: enough to find a file by path in a
// Proxmox installer ISO and read it, without root or a loop mount.
//
// Names are matched, per directory record, against the Rock Ridge NM name
// (SUSP, with CE continuation areas) when the image has one, else against
// the plain ISO 9660 name (";1" and a trailing dot dropped, case folded).
// Rock Ridge and Joliet names are compared exactly.
// When a path is not found that way and the image carries a Joliet tree, the
// Joliet tree is searched too. Multi-extent files are read as one.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"unicode/utf16"
)

const (
	isoSector = 2048
	// isoMaxDirSize caps one directory's extent: a real directory of the
	// installer ISO is a few sectors.
	isoMaxDirSize = 16 << 20
	// isoMaxDepth caps a lookup path's depth (ISO 9660 allows 8 levels
	// without Rock Ridge relocation).
	isoMaxDepth = 32
	// isoMaxCE caps how many SUSP continuation areas one record may chain.
	isoMaxCE = 16
	// isoMaxExtents caps how many records one multi-extent file may span.
	isoMaxExtents = 1024
	// isoMaxRecords caps the records of one directory.
	isoMaxRecords = 1 << 16
	// isoMaxCEBytes caps the continuation area bytes read for one
	// directory's names.
	isoMaxCEBytes = 1 << 20
)

// errNotISO9660 is wrapped by openISO when the image has no ISO 9660
// primary volume descriptor.
var errNotISO9660 = errors.New("no ISO 9660 primary volume descriptor")

// isoImage is an opened ISO 9660 image.
type isoImage struct {
	r    io.ReaderAt
	size int64
	// root and joliet are the root directory records of the primary and
	// (when present) the Joliet volume.
	root, joliet *isoRecord
	// susp is true when the primary root carries a SUSP "SP" entry; skip
	// is its byte count to skip at the start of each system use area.
	susp bool
	skip int
	// volumeDate is the primary volume's modification date as its 16
	// digits (xorriso's "-volume_date uuid"), or "" when unset.
	volumeDate string
	// volumeID is the primary volume identifier, trimmed.
	volumeID string
}

// isoRecord is one directory record.
type isoRecord struct {
	name    string // Rock Ridge name when present, else the ISO/Joliet name
	exact   bool   // a Rock Ridge or Joliet name: compared case-sensitively
	lba     uint32
	length  uint32
	dir     bool
	multi   bool // not the last extent of a multi-extent file
	extents []isoExtent
}

type isoExtent struct {
	lba    uint32
	length uint32
}

// openISO reads the volume descriptors of the image r of size bytes.
// openISOFile opens the file at path and parses it as an ISO image. The
// caller closes the returned file once done with the image; on error
// nothing stays open. An error in the content (rather than in opening the
// file) is an *isoParseError.
func openISOFile(path string) (*isoImage, *os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	im, err := openISO(f, st.Size())
	if err != nil {
		f.Close()
		return nil, nil, &isoParseError{err}
	}
	return im, f, nil
}

// isoParseError marks an error in the ISO's content rather than in
// opening the file.
type isoParseError struct{ err error }

func (e *isoParseError) Error() string { return e.err.Error() }
func (e *isoParseError) Unwrap() error { return e.err }

func openISO(r io.ReaderAt, size int64) (*isoImage, error) {
	im := &isoImage{r: r, size: size}
	buf := make([]byte, isoSector)
	for sector := int64(16); sector < 16+64; sector++ {
		if (sector+1)*isoSector > size {
			break
		}
		if _, err := r.ReadAt(buf, sector*isoSector); err != nil {
			return nil, fmt.Errorf("read volume descriptor %d: %w", sector, err)
		}
		if string(buf[1:6]) != "CD001" {
			break
		}
		typ := buf[0]
		if typ == 255 {
			break
		}
		switch typ {
		case 1:
			if im.root != nil {
				continue
			}
			if binary.LittleEndian.Uint16(buf[128:]) != isoSector {
				return nil, fmt.Errorf("logical block size %d: only %d is supported", binary.LittleEndian.Uint16(buf[128:]), isoSector)
			}
			rec, _, err := parseISORecord(buf[156:190], false)
			if err != nil {
				return nil, fmt.Errorf("primary root record: %w", err)
			}
			im.root = rec
			im.volumeID = strings.TrimRight(string(buf[40:72]), " \x00")
			date := string(buf[830:846])
			if isDigits(date) && strings.Trim(date, "0") != "" {
				im.volumeDate = date
			}
		case 2:
			esc := buf[88:91]
			if im.joliet == nil && esc[0] == '%' && esc[1] == '/' && (esc[2] == '@' || esc[2] == 'C' || esc[2] == 'E') {
				rec, _, err := parseISORecord(buf[156:190], true)
				if err == nil {
					im.joliet = rec
				}
			}
		}
	}
	if im.root == nil {
		return nil, errNotISO9660
	}
	if !im.root.dir {
		return nil, errors.New("primary root record is not a directory")
	}
	im.detectSUSP()
	return im, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// detectSUSP looks for the SUSP "SP" entry in the root's "." record.
func (im *isoImage) detectSUSP() {
	if im.root.length < 34 || int64(im.root.lba)*isoSector+34 > im.size {
		return
	}
	head := make([]byte, 255)
	n, _ := im.r.ReadAt(head, int64(im.root.lba)*isoSector)
	head = head[:n]
	if len(head) < 34 || int(head[0]) > len(head) || head[0] < 34 {
		return
	}
	rec := head[:head[0]]
	su := systemUse(rec)
	if len(su) >= 7 && su[0] == 'S' && su[1] == 'P' && su[4] == 0xBE && su[5] == 0xEF {
		im.susp = true
		im.skip = int(su[6])
	}
}

// systemUse returns the system use area of the raw directory record rec.
func systemUse(rec []byte) []byte {
	nameLen := int(rec[32])
	off := 33 + nameLen
	if nameLen%2 == 0 {
		off++ // padding byte
	}
	if off >= len(rec) {
		return nil
	}
	return rec[off:]
}

// parseISORecord decodes the raw directory record rec (its length byte
// first). It returns the record and the system use area.
func parseISORecord(rec []byte, joliet bool) (*isoRecord, []byte, error) {
	if len(rec) < 34 || int(rec[0]) > len(rec) || rec[0] < 34 {
		return nil, nil, fmt.Errorf("directory record of %d bytes is too short", len(rec))
	}
	rec = rec[:rec[0]]
	nameLen := int(rec[32])
	if 33+nameLen > len(rec) {
		return nil, nil, fmt.Errorf("directory record name of %d bytes overruns the record", nameLen)
	}
	flags := rec[25]
	r := &isoRecord{
		lba:    binary.LittleEndian.Uint32(rec[2:]),
		length: binary.LittleEndian.Uint32(rec[10:]),
		dir:    flags&0x02 != 0,
		multi:  flags&0x80 != 0,
	}
	raw := rec[33 : 33+nameLen]
	switch {
	case nameLen == 1 && raw[0] == 0:
		r.name = "."
	case nameLen == 1 && raw[0] == 1:
		r.name = ".."
	case joliet:
		u := make([]uint16, 0, nameLen/2)
		for i := 0; i+1 < len(raw); i += 2 {
			u = append(u, binary.BigEndian.Uint16(raw[i:]))
		}
		r.name = plainISOName(string(utf16.Decode(u)))
		r.exact = true
	default:
		r.name = plainISOName(string(raw))
	}
	return r, systemUse(rec), nil
}

// plainISOName drops the ";1" version and a trailing dot of an ISO 9660
// file identifier.
func plainISOName(s string) string {
	if i := strings.LastIndexByte(s, ';'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSuffix(s, ".")
}

// rockRidgeName collects the NM entries of the system use area su,
// following CE continuation areas. It returns "" when there are none.
func (im *isoImage) rockRidgeName(su []byte, ceBudget *int) string {
	if !im.susp {
		return ""
	}
	if im.skip <= len(su) {
		su = su[im.skip:]
	} else {
		return ""
	}
	var name []byte
	found := false
	for hops := 0; hops <= isoMaxCE && len(su) > 0; hops++ {
		var next []byte
		for len(su) >= 4 {
			l := int(su[2])
			if l < 4 || l > len(su) {
				break
			}
			e := su[:l]
			su = su[l:]
			switch string(e[:2]) {
			case "NM":
				if l >= 5 {
					fl := e[4]
					switch {
					case fl&0x02 != 0:
						name = append(name, '.')
					case fl&0x04 != 0:
						name = append(name, '.', '.')
					default:
						name = append(name, e[5:]...)
					}
					found = true
				}
			case "CE":
				if l >= 28 {
					blk := binary.LittleEndian.Uint32(e[4:])
					off := binary.LittleEndian.Uint32(e[12:])
					n := binary.LittleEndian.Uint32(e[20:])
					at := int64(blk)*isoSector + int64(off)
					if n > 0 && n <= isoSector && int(n) <= *ceBudget && at >= 0 && at+int64(n) <= im.size {
						*ceBudget -= int(n)
						b := make([]byte, n)
						if _, err := im.r.ReadAt(b, at); err == nil {
							next = b
						}
					}
				}
			case "ST":
				su = nil
			}
		}
		su = next
	}
	if !found {
		return ""
	}
	return string(name)
}

// readDir lists the records of the directory d, "." and ".." excluded.
// Consecutive records of a multi-extent file are folded into one.
func (im *isoImage) readDir(d *isoRecord, joliet bool) ([]*isoRecord, error) {
	if !d.dir {
		return nil, fmt.Errorf("%s is not a directory", d.name)
	}
	if d.length > isoMaxDirSize {
		return nil, fmt.Errorf("directory %s of %d bytes is larger than %d", d.name, d.length, isoMaxDirSize)
	}
	start := int64(d.lba) * isoSector
	if start+int64(d.length) > im.size {
		return nil, fmt.Errorf("directory %s lies outside the image", d.name)
	}
	data := make([]byte, d.length)
	if _, err := im.r.ReadAt(data, start); err != nil {
		return nil, fmt.Errorf("read directory %s: %w", d.name, err)
	}
	var out []*isoRecord
	var pending *isoRecord
	ceBudget, records := isoMaxCEBytes, 0
	for sec := 0; sec < len(data); sec += isoSector {
		end := min(sec+isoSector, len(data))
		for i := sec; i < end; {
			l := int(data[i])
			if l == 0 {
				break // rest of this sector is padding
			}
			if l < 34 || i+l > end {
				return nil, fmt.Errorf("directory %s: malformed record at byte %d", d.name, i)
			}
			if records++; records > isoMaxRecords {
				return nil, fmt.Errorf("directory %s has more than %d records", d.name, isoMaxRecords)
			}
			rec, su, err := parseISORecord(data[i:i+l], joliet)
			i += l
			if err != nil {
				return nil, fmt.Errorf("directory %s: %w", d.name, err)
			}
			if rec.name == "." || rec.name == ".." {
				continue
			}
			if !joliet {
				if n := im.rockRidgeName(su, &ceBudget); n != "" {
					rec.name, rec.exact = n, true
				}
			}
			ext := isoExtent{lba: rec.lba, length: rec.length}
			if pending != nil {
				if len(pending.extents) >= isoMaxExtents {
					return nil, fmt.Errorf("directory %s: file %s has more than %d extents", d.name, pending.name, isoMaxExtents)
				}
				pending.extents = append(pending.extents, ext)
				pending.multi = rec.multi
				if !rec.multi {
					out = append(out, pending)
					pending = nil
				}
				continue
			}
			rec.extents = []isoExtent{ext}
			if rec.multi && !rec.dir {
				pending = rec
				continue
			}
			out = append(out, rec)
		}
	}
	if pending != nil {
		out = append(out, pending)
	}
	return out, nil
}

// lookup finds the file or directory at the slash-separated path p. It
// returns an error wrapping [fs.ErrNotExist] when there is none.
func (im *isoImage) lookup(p string) (*isoRecord, error) {
	rec, err := im.lookupIn(im.root, p, false)
	if errors.Is(err, fs.ErrNotExist) && im.joliet != nil {
		if jr, jerr := im.lookupIn(im.joliet, p, true); jerr == nil {
			return jr, nil
		}
	}
	return rec, err
}

func (im *isoImage) lookupIn(root *isoRecord, p string, joliet bool) (*isoRecord, error) {
	parts := strings.FieldsFunc(p, func(r rune) bool { return r == '/' })
	if len(parts) > isoMaxDepth {
		return nil, fmt.Errorf("path %s is deeper than %d levels", p, isoMaxDepth)
	}
	cur := root
	for _, part := range parts {
		ents, err := im.readDir(cur, joliet)
		if err != nil {
			return nil, err
		}
		var hit *isoRecord
		for _, e := range ents {
			if e.exact && e.name == part {
				hit = e
				break
			}
			if hit == nil && !e.exact && strings.EqualFold(e.name, part) {
				hit = e
			}
		}
		if hit == nil {
			return nil, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
		}
		cur = hit
	}
	if cur.extents == nil {
		cur.extents = []isoExtent{{lba: cur.lba, length: cur.length}}
	}
	return cur, nil
}

// size returns the file's length in bytes.
func (r *isoRecord) size() int64 {
	var n int64
	for _, e := range r.extents {
		n += int64(e.length)
	}
	return n
}

// open returns a reader of the file rec's content.
func (im *isoImage) open(rec *isoRecord) (io.Reader, error) {
	if rec.dir {
		return nil, fmt.Errorf("%s is a directory", rec.name)
	}
	rs := make([]io.Reader, 0, len(rec.extents))
	for _, e := range rec.extents {
		at := int64(e.lba) * isoSector
		if at+int64(e.length) > im.size {
			return nil, fmt.Errorf("%s lies outside the image", rec.name)
		}
		rs = append(rs, io.NewSectionReader(im.r, at, int64(e.length)))
	}
	return io.MultiReader(rs...), nil
}

// readFile returns the content of the file at p, at most max bytes.
func (im *isoImage) readFile(p string, max int64) ([]byte, error) {
	rec, err := im.lookup(p)
	if err != nil {
		return nil, err
	}
	if rec.size() > max {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d expected", p, rec.size(), max)
	}
	r, err := im.open(rec)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := io.Copy(&b, r); err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	return b.Bytes(), nil
}
