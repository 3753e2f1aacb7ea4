package cli

import (
	"bytes"
	"errors"
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/pxe/apitype"
)

func TestModuleVersion(t *testing.T) {
	const mod = "github.com/plasmactl/plasma-node"
	tests := map[string]struct {
		bi   *debug.BuildInfo
		want string
	}{
		"no build information is devel":          {nil, "(devel)"},
		"the main module's version is printed":   {&debug.BuildInfo{Main: debug.Module{Path: mod, Version: "v1.2.3"}}, "v1.2.3"},
		"a main module without version is devel": {&debug.BuildInfo{Main: debug.Module{Path: mod}}, "(devel)"},
		"a dependency's version is printed": {&debug.BuildInfo{Main: debug.Module{Path: "example.com/site", Version: "v9.9.9"},
			Deps: []*debug.Module{{Path: "other", Version: "v0.1.0"}, {Path: mod, Version: "v0.4.0", Replace: &debug.Module{Path: "../plasma-node"}}}}, "v0.4.0"},
		"a program without the module is devel": {&debug.BuildInfo{Main: debug.Module{Path: "example.com/site", Version: "v9.9.9"}}, "(devel)"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := ModuleVersion(tc.bi, mod); got != tc.want {
				t.Errorf("ModuleVersion = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestReadBuild(t *testing.T) {
	const mod = "github.com/plasmactl/plasma-node"
	vcs := []debug.BuildSetting{{Key: "-buildmode", Value: "exe"}, {Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "004a729271e13544e58bb8a3384dfe7e1ae34cd5"}, {Key: "vcs.time", Value: "2026-12-05T23:03:38Z"}, {Key: "vcs.modified", Value: "true"}}
	tests := map[string]struct {
		bi   *debug.BuildInfo
		want apitype.Build
	}{
		"no build information": {nil, apitype.Build{Version: "(devel)"}},
		"make build from a checkout": {&debug.BuildInfo{Main: debug.Module{Path: mod, Version: "v0.0.0-20261205230338-004a729271e1"}, Settings: vcs},
			apitype.Build{Version: "v0.0.0-20261205230338-004a729271e1", Commit: "004a729271e13544e58bb8a3384dfe7e1ae34cd5", Date: "2026-12-05T23:03:38Z", Modified: true}},
		"go install of a tag": {&debug.BuildInfo{Main: debug.Module{Path: mod, Version: "v1.2.3"}, Settings: vcs[:1]}, apitype.Build{Version: "v1.2.3"}},
		// The VCS settings of another main module are its own commit,
		// not the SDK's.
		"a dependency": {&debug.BuildInfo{Main: debug.Module{Path: "example.com/site"}, Deps: []*debug.Module{{Path: mod, Version: "v0.4.0"}}, Settings: vcs},
			apitype.Build{Version: "v0.4.0"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ReadBuild(tc.bi, mod)); diff != "" {
				t.Errorf("ReadBuild (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVersionCommandOutputs(t *testing.T) {
	run := func(args ...string) (string, error) {
		c := VersionCommand("plasma-node")
		var out bytes.Buffer
		c.SetOut(&out)
		c.SetErr(&out)
		c.SetArgs(args)
		err := c.Execute()
		return out.String(), err
	}
	// A test binary records no version of the module: (devel).
	tests := map[string]struct {
		args []string
		want string
	}{
		"text":     {nil, "plasma-node (devel)\n"},
		"json":     {[]string{"-o", "json"}, "{\n  \"name\": \"plasma-node\",\n  \"version\": \"(devel)\"\n}\n"},
		"yaml":     {[]string{"-o", "yaml"}, "name: plasma-node\nversion: (devel)\n"},
		"text too": {[]string{"--output", "text"}, "plasma-node (devel)\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := run(tc.args...)
			if err != nil || got != tc.want {
				t.Errorf("version %v = %q, %v; want %q", tc.args, got, err, tc.want)
			}
		})
	}
	if _, err := run("-o", "xml"); !errors.As(err, new(UsageError)) {
		t.Errorf("version -o xml: %v, want a usage error", err)
	}
}
