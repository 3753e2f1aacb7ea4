package folder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/internal/lockfile"
	"github.com/plasmactl/plasma-node/internal/regularfile"
	"github.com/plasmactl/plasma-node/pxe/enrol"
)

// Names of the rule store's files in the state folder.
const (
	RulesFile     = "rules.json"
	rulesLockName = "rules.lock"
)

// maxRulesFile bounds rules.json: 8 MiB, room for [enrol.MaxRules]
// rules, their counters and holds.
const maxRulesFile = 8 << 20

// Rules is the enrolment rules' store ([enrol.Store]) of one state
// folder: rules.json, written whole under rules.lock, so that processes
// sharing the folder update it one at a time. Safe for concurrent use.
type Rules struct {
	dir string
	mu  sync.Mutex
}

var _ enrol.Store = (*Rules)(nil)

// OpenRules returns the rule store of the state folder dir. It does no
// I/O; the file is made on the first update.
func OpenRules(dir string) *Rules { return &Rules{dir: dir} }

// Read returns the kept state; an empty one when there is no file.
func (s *Rules) Read(ctx context.Context) (enrol.State, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.read()
}

// Update applies fn under the process's mutex and the folder's lock
// file and writes its result; an error of fn writes nothing.
func (s *Rules) Update(ctx context.Context, fn func(enrol.State) (enrol.State, error)) (enrol.State, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lk, err := lockfile.Acquire(ctx, filepath.Join(s.dir, rulesLockName), "enrolment rules", 5*time.Millisecond)
	if err != nil {
		return enrol.State{}, fmt.Errorf("enrolment rules: %w", err)
	}
	defer lk.Unlock()
	st, err := s.read()
	if err != nil {
		return enrol.State{}, err
	}
	out, err := fn(st)
	if err != nil {
		return enrol.State{}, err
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return enrol.State{}, err
	}
	if len(data) > maxRulesFile {
		return enrol.State{}, fmt.Errorf("enrolment rules: %d bytes, more than %d", len(data), maxRulesFile)
	}
	if err := atomicfile.WriteFile(filepath.Join(s.dir, RulesFile), append(data, '\n'), 0o600); err != nil {
		return enrol.State{}, fmt.Errorf("enrolment rules: %w", err)
	}
	return out, nil
}

func (s *Rules) read() (enrol.State, error) {
	path := filepath.Join(s.dir, RulesFile)
	data, err := regularfile.Read(path, maxRulesFile)
	if errors.Is(err, fs.ErrNotExist) {
		return enrol.State{}, nil
	}
	if err != nil {
		return enrol.State{}, fmt.Errorf("enrolment rules: %w", err)
	}
	var st enrol.State
	if err := json.Unmarshal(data, &st); err != nil {
		return enrol.State{}, fmt.Errorf("enrolment rules %s: %w", path, err)
	}
	return st, nil
}
