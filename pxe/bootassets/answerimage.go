package bootassets

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// AnswerImageLabel is the volume label of an answer image
// ([AnswerImage]): the installer's partition mode looks for the label
// proxmox-ais in /dev/disk/by-label as it is, then in upper and in lower
// case (reference §3.2); an ISO 9660 label is upper case.
const AnswerImageLabel = "PROXMOX-AIS"

// answerImageFile is where the partition mode reads the answer: the root
// of the labelled filesystem.
const answerImageFile = "answer.toml"

// ErrNoPartitionMode is returned (wrapped) for an installer without the
// partition mode a generic ISO plus an answer image needs: Proxmox VE
// 8.2, whose installers look for a label that changed within 8.2
// (proxmox-inst-src before package 8.2.4, proxmox-ais after) and whose
// mode file takes no partition_label, so which label an 8.2 ISO reads
// cannot be told from its version.
var ErrNoPartitionMode = errors.New("the installer has no partition mode plasma-node can use (it needs Proxmox VE 8.3 or later)")

// PartitionMode reports whether the installer of an ISO of the given
// product version ("8.3", "9.2") reads its answer from a filesystem
// labelled proxmox-ais as [AnswerImage] makes it: 8.3 and later, and any
// version it cannot parse.
func PartitionMode(version string) bool { return hasPartitionLabel(version) }

// ComposePartitionISO composes the generic ISO of the installer's
// partition mode (prepare-iso --fetch-from partition): the base image (a
// release ISO of Proxmox VE version) with an /auto-installer-mode.toml of
// mode "partition" and label proxmox-ais in place of the base's, and no
// answer: the installer reads it from the answer image ([AnswerImage])
// mounted beside. Nothing of the base is copied or changed. An installer
// without the mode is refused with [ErrNoPartitionMode].
func ComposePartitionISO(base io.ReaderAt, size int64, version string, mtime time.Time) (*ComposedISO, error) {
	if !PartitionMode(version) {
		return nil, fmt.Errorf("compose the partition-mode ISO of %s: %w", version, ErrNoPartitionMode)
	}
	return composeISO(base, size, map[string][]byte{isoModeFile: renderMode("partition", version, "", "", "")}, mtime)
}

// AnswerImage returns an answer image: a small ISO 9660 filesystem
// labelled [AnswerImageLabel] holding answer as /answer.toml, which the
// installer of a partition-mode ISO ([ComposePartitionISO]) mounts and
// reads when the image is lent to the machine as a second medium (a
// removable disk, a USB stick or a floppy). It is plain ISO 9660 (the
// kernel shows answer.toml in lower case), made in memory, without root
// or tools. The answer is a secret: the caller clears the image after
// use.
func AnswerImage(answer []byte, mtime time.Time) ([]byte, error) {
	if len(answer) == 0 || len(answer) > maxComposedFile {
		return nil, fmt.Errorf("answer image: an answer of %d bytes (want 1 to %d)", len(answer), maxComposedFile)
	}
	const pvd, term, lTable, mTable, root, data = 16, 17, 18, 19, 20, 21
	sectors := data + (len(answer)+isoSector-1)/isoSector
	img := make([]byte, sectors*isoSector)
	t := mtime.UTC()

	d := img[pvd*isoSector : (pvd+1)*isoSector]
	d[0], d[6] = 1, 1
	copy(d[1:6], "CD001")
	copy(d[8:40], pad("LINUX", 32))
	copy(d[40:72], pad(AnswerImageLabel, 32))
	putBoth32(d[80:], uint32(sectors))
	putBoth16(d[120:], 1) // volume set size
	putBoth16(d[124:], 1) // volume sequence number
	putBoth16(d[128:], isoSector)
	putBoth32(d[132:], 10) // path table size: the root's entry
	binary.LittleEndian.PutUint32(d[140:], lTable)
	binary.BigEndian.PutUint32(d[148:], mTable)
	copy(d[156:190], dirRecord(0, root, t))
	copy(d[190:813], pad("", 813-190))
	copy(d[574:702], pad("PLASMA-NODE", 128)) // application
	date := []byte(t.Format("20060102150405") + "00\x00")
	copy(d[813:], date) // created
	copy(d[830:], date) // modified
	copy(d[847:], "0000000000000000")
	copy(d[864:], date) // effective
	d[881] = 1          // file structure version

	d = img[term*isoSector:]
	d[0], d[6] = 255, 1
	copy(d[1:6], "CD001")

	for _, pt := range []struct {
		at    int
		order binary.ByteOrder
	}{{lTable, binary.LittleEndian}, {mTable, binary.BigEndian}} {
		e := img[pt.at*isoSector:]
		e[0] = 1 // the root's identifier: one zero byte
		pt.order.PutUint32(e[2:], root)
		pt.order.PutUint16(e[6:], 1) // its parent: itself
	}

	dir := img[root*isoSector : (root+1)*isoSector]
	n := copy(dir, dirRecord(0, root, t))
	n += copy(dir[n:], dirRecord(1, root, t))
	copy(dir[n:], newRecord(answerImageFile, data, uint32(len(answer)), false, false, t))
	copy(img[data*isoSector:], answer)
	return img, nil
}

// dirRecord is the 34-byte record of the one-sector root directory at
// lba: "." (id 0) or ".." (id 1).
func dirRecord(id byte, lba uint32, t time.Time) []byte {
	r := make([]byte, 34)
	r[0] = 34
	putBoth32(r[2:], lba)
	putBoth32(r[10:], isoSector)
	copy(r[18:25], []byte{byte(t.Year() - 1900), byte(t.Month()), byte(t.Day()), byte(t.Hour()), byte(t.Minute()), byte(t.Second()), 0})
	r[25] = 2 // a directory
	putBoth16(r[28:], 1)
	r[32], r[33] = 1, id
	return r
}

// putBoth16 writes v in both byte orders, as ISO 9660 keeps numbers.
func putBoth16(b []byte, v uint16) {
	binary.LittleEndian.PutUint16(b, v)
	binary.BigEndian.PutUint16(b[2:], v)
}

// pad is s padded with spaces to n bytes.
func pad(s string, n int) []byte { return []byte(s + strings.Repeat(" ", n-len(s))) }
