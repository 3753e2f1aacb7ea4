package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/plasmactl/plasma-node/pxe/apitype"
	"github.com/spf13/cobra"
)

// Module is the SDK's module path, whose version the version command
// prints.
const Module = "github.com/plasmactl/plasma-node"

// VersionCommand prints "<name> <module version>": the version of
// [Module] in the binary's build information, whether it is the main
// module (go install .../cmd/plasma-node@v1.2.3, or make build from a
// checkout) or a dependency of another program that embeds the commands.
// With -o json or yaml it prints the whole [apitype.Build] (commit and
// date too) under the binary's name.
func VersionCommand(name string) *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:     "version",
		Short:   "Print the module version (and, with -o json, the commit and its date)",
		Example: "  " + name + " version\n  " + name + " version -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bi, _ := debug.ReadBuildInfo()
			b := ReadBuild(bi, Module)
			switch output {
			case "text":
				_, err := fmt.Fprintln(cmd.OutOrStdout(), name, b.Version)
				return err
			case "json", "yaml":
				return WriteData(cmd.OutOrStdout(), output, struct {
					Name string `json:"name"`
					apitype.Build
				}{name, b})
			}
			return Usage(fmt.Errorf("--output %q: want text, json or yaml", output))
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "text", "output format: text, json or yaml")
	return c
}

// ReadBuild returns what bi records of module path: its version
// ([ModuleVersion]) and, when path is the main module built from a git
// checkout with VCS stamping (make build does; go build's default does
// too, unless -buildvcs=false), the commit, its time and whether the
// checkout had uncommitted changes.
func ReadBuild(bi *debug.BuildInfo, path string) apitype.Build {
	b := apitype.Build{Version: ModuleVersion(bi, path)}
	if bi == nil || bi.Main.Path != path {
		return b
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.Date = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// ModuleVersion returns the version of module path in bi: the main
// module's version when it is path, else the required version of the
// dependency (a replaced one included), else "(devel)" (a build from a
// working tree without version control information, or a test).
func ModuleVersion(bi *debug.BuildInfo, path string) string {
	const devel = "(devel)"
	if bi == nil {
		return devel
	}
	if bi.Main.Path == path {
		if bi.Main.Version != "" {
			return bi.Main.Version
		}
		return devel
	}
	for _, d := range bi.Deps {
		if d.Path == path && d.Version != "" {
			return d.Version
		}
	}
	return devel
}
