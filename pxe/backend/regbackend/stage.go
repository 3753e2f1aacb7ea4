package regbackend

import (
	"context"
	"path/filepath"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/pxe/secret"
)

// staged is an answer's files written under temporary names: the root
// password and the one-shot first-boot files.
type staged []secret.Staged

func (s staged) discard() {
	for _, f := range s {
		f.Discard()
	}
}

// commit puts every file in place, then syncs dir, the one-shot files'
// folder, once for them all; on error it discards the rest.
func (s staged) commit(ctx context.Context, dir string) error {
	oneShots := false
	for i, f := range s {
		if err := f.Commit(ctx); err != nil {
			s[i+1:].discard()
			return err
		}
		_, ok := f.(oneShot)
		oneShots = oneShots || ok
	}
	if oneShots {
		return atomicfile.SyncDir(dir)
	}
	return nil
}

// oneShot is a one-shot file staged in the backend's folder: its Commit
// renames it into place and leaves the folder's sync to [staged.commit].
type oneShot struct{ *atomicfile.Staged }

func (o oneShot) Commit(context.Context) error { return o.Place() }

// stage writes a node's root password and first-boot files under
// temporary names, so that a full or read-only folder fails the answer
// before its registration is consumed.
func (b *Backend) stage(ctx context.Context, name, pw string, files map[string][]byte) (staged, error) {
	var out staged
	st, err := b.cfg.Secrets.StageRootPassword(ctx, name, pw)
	if err != nil {
		return nil, err
	}
	out = append(out, st)
	for fn, data := range files {
		st, err := atomicfile.Stage(filepath.Join(b.dir, fn), data, 0o600)
		if err != nil {
			out.discard()
			return nil, err
		}
		out = append(out, oneShot{st})
	}
	return out, nil
}
