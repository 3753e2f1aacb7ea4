package folder

import (
	"bytes"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// prestaged is a registration file's new content, written and synced
// under a temporary name before the folder's lock is taken: the sync of
// its data (the slow part of a rewrite) is then not held under the lock,
// where every consumption of a boot storm waits for it. It is put in
// place only when the file, read again under the lock, still holds the
// bytes it was made from; else the caller writes the content anew.
type prestaged struct {
	from []byte
	st   *atomicfile.Staged
}

// prestage reads the registration file src and stages, for the file
// dst, its content as change leaves it. It returns nil when the file
// cannot be read, change fails or the content cannot be staged: the
// caller then writes under the lock.
func (g *Registrations) prestage(src, dst, stem string, change func(*registry.Registration) error) *prestaged {
	r, data, err := g.readFileData(src, stem)
	if err != nil || change(&r) != nil {
		return nil
	}
	out, err := registry.EncodeRegistration(r)
	if err != nil {
		return nil
	}
	st, err := atomicfile.Stage(dst, out, 0o600)
	if err != nil {
		return nil
	}
	return &prestaged{from: data, st: st}
}

// place puts the staged content in place (renamed, the folder not yet
// synced) when read, the file's bytes read under the lock, are what it
// was made from, and reports whether it did.
func (p *prestaged) place(read []byte) bool {
	if p == nil || p.st == nil || !bytes.Equal(p.from, read) {
		return false
	}
	err := p.st.Place()
	p.st = nil
	return err == nil
}

// discard removes the staged file unless it was placed.
func (p *prestaged) discard() {
	if p != nil && p.st != nil {
		p.st.Discard()
		p.st = nil
	}
}

// write puts data in place as path's content: staged (synced) and
// renamed, the folder not synced; the caller syncs it.
func write(path string, data []byte) error {
	st, err := atomicfile.Stage(path, data, 0o600)
	if err != nil {
		return err
	}
	return st.Place()
}
