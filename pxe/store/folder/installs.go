package folder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/internal/regularfile"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// InstallsDir is the reports' folder in the state folder.
const InstallsDir = "installs"

// Installs is <state-dir>/installs/: <name>.json per installed node, written
// atomically, 0600 in a 0700 folder.
type Installs struct{ dir string }

var _ registry.Installs = (*Installs)(nil)

// OpenInstalls opens <stateDir>/installs/, creating it with mode 0700 if needed.
func OpenInstalls(stateDir string) (*Installs, error) {
	dir := filepath.Join(stateDir, InstallsDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open install reports: %w", err)
	}
	return &Installs{dir: dir}, nil
}

// Put writes in to <name>.json, replacing it.
func (s *Installs) Put(_ context.Context, in registry.Install) error {
	if err := registry.ValidateName(in.Name); err != nil {
		return fmt.Errorf("keep install report: %w", err)
	}
	data, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return fmt.Errorf("keep install report of %s: %w", in.Name, err)
	}
	if err := atomicfile.WriteFile(filepath.Join(s.dir, in.Name+".json"), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("keep install report of %s: %w", in.Name, err)
	}
	return nil
}

// Get reads <name>.json.
func (s *Installs) Get(_ context.Context, name string) (registry.Install, error) {
	if registry.ValidateName(name) != nil {
		return registry.Install{}, fmt.Errorf("install report of %q: %w", name, registry.ErrNoInstall)
	}
	return s.read(name)
}

func (s *Installs) read(name string) (registry.Install, error) {
	path := filepath.Join(s.dir, name+".json")
	data, err := regularfile.Read(path, maxFile)
	if errors.Is(err, fs.ErrNotExist) {
		return registry.Install{}, fmt.Errorf("install report of %s: %w", name, registry.ErrNoInstall)
	}
	if err != nil {
		return registry.Install{}, fmt.Errorf("install report %s: %w", path, err)
	}
	var in registry.Install
	if err := json.Unmarshal(data, &in); err != nil {
		return registry.Install{}, fmt.Errorf("install report %s: %w", path, err)
	}
	if in.Name != name {
		return registry.Install{}, fmt.Errorf("install report %s: names %q, not its file's name", path, in.Name)
	}
	return in, nil
}

// List reads every <name>.json, sorted by name; a file that cannot be
// read is an error naming it.
func (s *Installs) List(_ context.Context) ([]registry.Install, error) {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("list install reports: %w", err)
	}
	var out []registry.Install
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || strings.HasPrefix(e.Name(), atomicfile.TempPrefix) || registry.ValidateName(name) != nil {
			continue
		}
		in, err := s.read(name)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
