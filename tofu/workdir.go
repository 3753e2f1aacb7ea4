package tofu

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
)

// Names of the files and folders of a working directory.
const (
	// workdirBase is the folder under a project that holds one working
	// directory per platform: <project>/.plasma/node/<platform>/.
	workdirBase = ".plasma/node"
	// configFile is the generated configuration.
	configFile = "main.tf"
	// planFile is the saved plan written by [Runner.Plan]. It holds the
	// values of all variables, credentials included, and is removed by
	// [Workdir.Clean].
	planFile = "plan.tfplan"
	// varsFile is the credentials variables file written by
	// [Workdir.WriteVarsFile]. Tofu loads it by its *.auto.tfvars.json
	// name without a flag.
	varsFile = "credentials.auto.tfvars.json"
	// StateFile and stateBackupFile are the local backend's state.
	StateFile       = "terraform.tfstate"
	stateBackupFile = "terraform.tfstate.backup"
	// lockInfoFile is left by a local-state run that was killed.
	lockInfoFile = ".terraform.tfstate.lock.info"
)

var platformRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// Workdir is the generated OpenTofu working directory of one platform,
// <project>/.plasma/node/<platform>/, kept 0700 because its plan, state
// and variables files may hold secrets. It is not safe for concurrent use
// by several runs; callers serialise operations on a platform.
type Workdir struct {
	dir string
}

// OpenWorkdir creates (0700) or opens the working directory of platform
// under project, and tightens an existing folder to 0700. platform must be
// an RFC 1123 label, as platform names are.
//
// Errors: one matching [ErrInvalid] for a bad platform name.
func OpenWorkdir(project, platform string) (*Workdir, error) {
	if !platformRE.MatchString(platform) {
		return nil, fmt.Errorf("open workdir: platform %q: %w: want an RFC 1123 label (a-z, 0-9 and '-', 1-63 characters, no leading or trailing '-')", platform, ErrInvalid)
	}
	dir, err := filepath.Abs(filepath.Join(project, filepath.FromSlash(workdirBase), platform))
	if err != nil {
		return nil, fmt.Errorf("open workdir %s: %w", platform, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open workdir %s: %w", platform, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open workdir %s: %w", platform, err)
	}
	return &Workdir{dir: dir}, nil
}

// Dir returns the absolute path of the working directory.
func (w *Workdir) Dir() string { return w.dir }

// Path returns the absolute path of name inside the working directory.
func (w *Workdir) Path(name string) string { return filepath.Join(w.dir, name) }

// WriteConfig renders cfg and writes it atomically to main.tf.
//
// Errors: one matching [ErrInvalid] when cfg does not render (see
// [Config.Render]).
func (w *Workdir) WriteConfig(cfg *Config) error {
	b, err := cfg.Render()
	if err != nil {
		return err
	}
	return w.WriteConfigBytes(b)
}

// WriteConfigBytes writes an already rendered configuration atomically to
// main.tf.
func (w *Workdir) WriteConfigBytes(b []byte) error {
	if err := atomicfile.WriteFile(w.Path(configFile), b, 0o644); err != nil {
		return fmt.Errorf("write configuration: %w", err)
	}
	return nil
}

// WriteVarsFile writes vars, the values of variables the configuration
// declares (credentials, typically sensitive), as JSON to a 0600
// credentials.auto.tfvars.json, atomically. The returned remove deletes it
// and is safe to call more than once; call it (deferred) when the run
// ends. [Workdir.Clean] removes a file left by a killed run. Values never
// appear in errors.
//
// Errors: one matching [ErrInvalid] for a name that is not an identifier.
func (w *Workdir) WriteVarsFile(vars map[string]any) (remove func() error, err error) {
	for k := range vars {
		if !isIdentifier(k) {
			return nil, fmt.Errorf("write variables file: variable name %q: %w: want an identifier (letters, digits, '_' and '-', not starting with a digit)", k, ErrInvalid)
		}
	}
	b, err := json.MarshalIndent(vars, "", "  ")
	if err != nil {
		// The message of a marshal error can quote a value: drop it.
		return nil, errors.New("write variables file: a value cannot be encoded as JSON")
	}
	p := w.Path(varsFile)
	if err := atomicfile.WriteFile(p, append(b, '\n'), 0o600); err != nil {
		return nil, fmt.Errorf("write variables file: %w", err)
	}
	return func() error {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove variables file: %w", err)
		}
		return nil
	}, nil
}

// CleanOptions tune [Workdir.Clean].
type CleanOptions struct {
	// KeepState keeps the local backend's state files, for callers that
	// keep local state between runs. By default that state is transient:
	// node files are the truth and every run re-adopts servers with
	// import blocks. State in a pg or s3 backend is never touched.
	KeepState bool
}

// Clean removes what a run leaves behind that must not outlive it: the
// saved plan, every *.auto.tfvars.json, temporary files of interrupted
// writes, a stale local lock-info file and, unless opts.KeepState, the
// local state and its backup. It keeps main.tf, the provider cache in
// .terraform/ and the dependency lock file, so the next init is fast. A
// missing file is not an error.
func (w *Workdir) Clean(opts CleanOptions) error {
	names := []string{planFile, lockInfoFile}
	if !opts.KeepState {
		names = append(names, StateFile, stateBackupFile)
	}
	vars, err := filepath.Glob(filepath.Join(w.dir, "*.auto.tfvars.json"))
	if err != nil {
		return fmt.Errorf("clean workdir: %w", err)
	}
	for _, v := range vars {
		names = append(names, filepath.Base(v))
	}
	var errs []error
	for _, n := range names {
		if err := os.Remove(w.Path(n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := atomicfile.CleanTemp(w.dir); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("clean workdir: %w", err)
	}
	return nil
}

// isIdentifier reports whether s is an HCL identifier.
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
		case i > 0 && (r == '-' || r >= '0' && r <= '9'):
		default:
			return false
		}
	}
	return !strings.HasPrefix(s, "-")
}
