package tofu

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-version"
	install "github.com/hashicorp/hc-install"
	"github.com/hashicorp/hc-install/fs"
	"github.com/hashicorp/hc-install/product"
	"github.com/hashicorp/hc-install/releases"
	"github.com/hashicorp/hc-install/src"
)

// defaultNames are the executable names [Find] looks up on PATH, in
// order, when [FindOptions.Names] is empty.
var defaultNames = []string{"tofu", "terraform"}

// FindOptions tell [Find] where to look. The zero value looks up
// tofu, then terraform, on PATH and never downloads anything.
type FindOptions struct {
	// Path is an explicit path to the binary. When set it wins: it is the
	// only place looked at, and a missing or non-executable file is an
	// error rather than a reason to look elsewhere. A relative path is
	// taken from the current directory.
	Path string

	// Names are the executable names looked up on PATH, in order, when
	// Path is empty. Empty means "tofu", then "terraform".
	Names []string

	// Install, when set, downloads Terraform from the HashiCorp releases
	// site (or Install.BaseURL) if nothing was found. Nil, the default,
	// never touches the network.
	Install *InstallOptions

	// Logger receives debug messages; nil discards them.
	Logger *slog.Logger
}

// InstallOptions opt in to downloading Terraform with hc-install's
// releases installer, which verifies the download against HashiCorp's
// signed checksums.
type InstallOptions struct {
	// Version is the exact Terraform version to install, like "1.5.7".
	// Required.
	Version string

	// Dir is the folder binaries are installed into, as
	// Dir/VERSION/terraform, created 0700 if missing. A binary already
	// there is used without downloading again. Required.
	Dir string

	// BaseURL is a mirror of releases.hashicorp.com with the same layout.
	// Empty means the HashiCorp releases site.
	BaseURL string

	// Timeout bounds the download. Zero means hc-install's default
	// (5 minutes).
	Timeout time.Duration
}

// Binary is an OpenTofu or Terraform executable found by [Find].
type Binary struct {
	// Path is the absolute path of the executable.
	Path string
	// Name is the name it was found under ("tofu", "terraform"), or the
	// base name of an explicit path.
	Name string
	// Installed is true when [FindOptions.Install] downloaded it.
	Installed bool
}

// ErrNoBinary is matched (with errors.Is) by the [*NotFoundError] that
// [Find] returns when no usable binary was found.
var ErrNoBinary = errors.New("no tofu or terraform binary")

// NotFoundError says where [Find] looked. It matches [ErrNoBinary].
type NotFoundError struct {
	// Tried lists what was tried, in order: an explicit path, or each name
	// as "NAME on PATH", then "install terraform VERSION" when an install
	// was attempted.
	Tried []string
	// Err is the last underlying failure, if any.
	Err error
}

// Error lists what was tried.
func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("%v: tried %s", ErrNoBinary, strings.Join(e.Tried, ", "))
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is reports whether target is [ErrNoBinary].
func (e *NotFoundError) Is(target error) bool { return target == ErrNoBinary }

// Unwrap returns the last underlying failure.
func (e *NotFoundError) Unwrap() error { return e.Err }

// Find locates an OpenTofu or Terraform binary with hc-install's finders:
// the explicit [FindOptions.Path] if set, else each of
// [FindOptions.Names] on PATH in order (by default tofu, then terraform).
// Only when nothing was found and [FindOptions.Install] is set does it
// download Terraform. It does not run the binary.
//
// Errors: a [*NotFoundError] matching [ErrNoBinary] when nothing usable
// was found; an error matching [ErrInvalid] for bad options.
func Find(ctx context.Context, opts FindOptions) (Binary, error) {
	log := logger(opts.Logger)
	if opts.Install != nil {
		if _, err := opts.Install.validate(); err != nil {
			return Binary{}, err
		}
	}
	sources, tried, err := findSources(opts)
	if err != nil {
		return Binary{}, err
	}
	var last error
	for i, s := range sources {
		p, err := s.Find(ctx)
		if err == nil {
			log.Debug("found binary", "path", p, "tried", tried[:i+1])
			return Binary{Path: p, Name: binaryName(opts, i, p)}, nil
		}
		if ctx.Err() != nil {
			return Binary{}, fmt.Errorf("find binary: %w", ctx.Err())
		}
		last = err
	}
	if opts.Install == nil {
		return Binary{}, &NotFoundError{Tried: tried, Err: last}
	}
	if p := opts.Install.binPath(); isExecutable(p) {
		log.Debug("found installed binary", "path", p)
		return Binary{Path: p, Name: "terraform", Installed: true}, nil
	}
	tried = append(tried, "install terraform "+opts.Install.Version)
	p, err := installTerraform(ctx, *opts.Install, log)
	if err != nil {
		return Binary{}, &NotFoundError{Tried: tried, Err: err}
	}
	return Binary{Path: p, Name: "terraform", Installed: true}, nil
}

// findSources builds the hc-install finders for opts, and a description of
// each for error messages. It runs nothing.
func findSources(opts FindOptions) ([]*fs.AnyVersion, []string, error) {
	if opts.Path != "" {
		abs, err := filepath.Abs(opts.Path)
		if err != nil {
			return nil, nil, fmt.Errorf("find binary %q: %w", opts.Path, err)
		}
		return []*fs.AnyVersion{{ExactBinPath: abs}}, []string{abs}, nil
	}
	names := opts.Names
	if len(names) == 0 {
		names = defaultNames
	}
	var sources []*fs.AnyVersion
	var tried []string
	for _, n := range names {
		if n == "" || strings.ContainsAny(n, `/\`) {
			return nil, nil, fmt.Errorf("find binary: name %q: %w: want a bare executable name like %q (use Path for a path)", n, ErrInvalid, "tofu")
		}
		p := findProduct(n)
		av := &fs.AnyVersion{Product: &p}
		if err := av.Validate(); err != nil {
			return nil, nil, fmt.Errorf("find binary: name %q: %w: %v", n, ErrInvalid, err)
		}
		sources = append(sources, av)
		tried = append(tried, n+" on PATH")
	}
	return sources, tried, nil
}

// findProduct describes an executable name to hc-install. Terraform is
// its own product; any other name (tofu) is a custom product reusing the
// Terraform version parser, which reads `version -json` output that tofu
// also prints.
func findProduct(name string) product.Product {
	if name == product.Terraform.Name {
		return product.Terraform
	}
	return product.Product{
		Name:       name,
		BinaryName: func() string { return name },
		GetVersion: product.Terraform.GetVersion,
	}
}

func binaryName(opts FindOptions, i int, path string) string {
	if opts.Path != "" {
		return filepath.Base(path)
	}
	names := opts.Names
	if len(names) == 0 {
		names = defaultNames
	}
	return names[i]
}

// validate checks o and parses its version, without network.
func (o InstallOptions) validate() (*version.Version, error) {
	v, err := version.NewVersion(o.Version)
	if err != nil || o.Version == "" || strings.HasPrefix(o.Version, "v") {
		return nil, fmt.Errorf("install terraform: version %q: %w: want an exact version like %q", o.Version, ErrInvalid, "1.5.7")
	}
	if o.Dir == "" {
		return nil, fmt.Errorf("install terraform: %w: Dir is required (a folder to install into)", ErrInvalid)
	}
	return v, nil
}

// installSource builds the hc-install releases installer for o. It runs
// nothing.
func installSource(o InstallOptions) (*releases.ExactVersion, error) {
	v, err := o.validate()
	if err != nil {
		return nil, err
	}
	return &releases.ExactVersion{
		Product:    product.Terraform,
		Version:    v,
		InstallDir: filepath.Dir(o.binPath()),
		ApiBaseURL: o.BaseURL,
		Timeout:    o.Timeout,
	}, nil
}

func installTerraform(ctx context.Context, o InstallOptions, log *slog.Logger) (string, error) {
	s, err := installSource(o)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(o.binPath()), 0o700); err != nil {
		return "", fmt.Errorf("install terraform %s: %w", o.Version, err)
	}
	log.Info("installing terraform", "version", o.Version, "dir", o.Dir)
	p, err := install.NewInstaller().Install(ctx, []src.Installable{s})
	if err != nil {
		return "", fmt.Errorf("install terraform %s: %w", o.Version, err)
	}
	return p, nil
}

// binPath is where o installs its binary.
func (o InstallOptions) binPath() string {
	return filepath.Join(o.Dir, o.Version, product.Terraform.BinaryName())
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
