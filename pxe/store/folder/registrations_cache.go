package folder

import (
	"io/fs"
	"strings"
	"syscall"

	"github.com/plasmactl/plasma-node/pxe/registry"
)

// fileKey identifies one version of a registration file: a rewrite
// (always a rename of a new file: another inode) or an edit in place
// (another change time, size or modification time) gives another key.
type fileKey struct {
	ino, size, mtime, ctime int64
}

// keyOf returns the key of a regular file's lstat info; false when the
// info carries no inode (then the file is read every time).
func keyOf(info fs.FileInfo) (fileKey, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || !info.Mode().IsRegular() {
		return fileKey{}, false
	}
	return fileKey{ino: int64(st.Ino), size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, true
}

// cachedFile is a decoded registration file and the version it was read
// from.
type cachedFile struct {
	key fileKey
	r   registry.Registration
}

// cached returns a copy of the registration decoded from path when the
// file is still the version it was read from.
func (g *Registrations) cached(path string, key fileKey) (registry.Registration, bool) {
	g.cacheMu.Lock()
	defer g.cacheMu.Unlock()
	c, ok := g.cache[path]
	if !ok || c.key != key {
		return registry.Registration{}, false
	}
	return c.r.Clone(), true
}

// remember keeps r as decoded from the version key of path. key is the
// file's lstat before it was read: a change made meanwhile gives the next
// scan another key, and the file is read again.
func (g *Registrations) remember(path string, key fileKey, r registry.Registration) {
	g.cacheMu.Lock()
	defer g.cacheMu.Unlock()
	if g.cache == nil {
		g.cache = map[string]cachedFile{}
	}
	g.cache[path] = cachedFile{key: key, r: r.Clone()}
}

// forget drops the entries of files with suffix that a scan did not see
// (removed or renamed), so the cache holds at most the folder's files.
func (g *Registrations) forget(suffix string, seen map[string]bool) {
	g.cacheMu.Lock()
	defer g.cacheMu.Unlock()
	for p := range g.cache {
		if !seen[p] && strings.HasSuffix(p, suffix) {
			delete(g.cache, p)
		}
	}
}
