package agent

import (
	"bufio"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Modules is what modules.alias and modules.dep of a kernel's modules
// folder say: which module a modalias asks for, and what each module
// needs loaded first.
type Modules struct {
	aliases []alias
	// deps maps a module's name to its file (relative to the folder)
	// and its dependencies' names, the first to load last.
	files map[string]string
	deps  map[string][]string
}

type alias struct{ pattern, module string }

// modName is a module's name as modules.alias spells it: the file's
// base name without .ko and compression suffix, '-' as '_'.
func modName(file string) string {
	b := path.Base(file)
	if i := strings.Index(b, ".ko"); i >= 0 {
		b = b[:i]
	}
	return strings.ReplaceAll(b, "-", "_")
}

// parseModules reads modules.alias and modules.dep.
func parseModules(aliases, deps io.Reader) (*Modules, error) {
	m := &Modules{files: map[string]string{}, deps: map[string][]string{}}
	sc := bufio.NewScanner(aliases)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == "alias" {
			m.aliases = append(m.aliases, alias{f[1], strings.ReplaceAll(f[2], "-", "_")})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	sc = bufio.NewScanner(deps)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		file, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		name := modName(file)
		m.files[name] = strings.TrimSpace(file)
		for _, d := range strings.Fields(rest) {
			m.deps[name] = append(m.deps[name], modName(d))
			if _, ok := m.files[modName(d)]; !ok {
				m.files[modName(d)] = d
			}
		}
	}
	return m, sc.Err()
}

// For returns the modules the modaliases ask for, in the order
// modules.alias names them, each once.
func (m *Modules) For(modaliases []string) []string {
	var out []string
	for _, ma := range modaliases {
		for _, a := range m.aliases {
			if ok, _ := path.Match(a.pattern, ma); ok && !slices.Contains(out, a.module) {
				out = append(out, a.module)
			}
		}
	}
	return out
}

// Order returns the files to load for the named modules, every module's
// dependencies before it, each once, skipping those in done (which it
// extends). A module modules.dep does not know is skipped (built in).
func (m *Modules) Order(names []string, done map[string]bool) []string {
	var out []string
	var visit func(n string)
	visit = func(n string) {
		if done[n] {
			return
		}
		done[n] = true
		file, ok := m.files[n]
		if !ok {
			return
		}
		deps := m.deps[n]
		for i := len(deps) - 1; i >= 0; i-- {
			visit(deps[i])
		}
		out = append(out, file)
	}
	for _, n := range names {
		visit(n)
	}
	return out
}

// Modaliases returns the modalias of every device under the sysfs root
// sys (its devices folder).
func Modaliases(sys string) []string {
	var out []string
	filepath.WalkDir(filepath.Join(sys, "devices"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() && d.Name() == "modalias" {
			if s := read(p); s != "" && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		return nil
	})
	slices.Sort(out)
	return out
}
