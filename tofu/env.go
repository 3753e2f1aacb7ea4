package tofu

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-exec/tfexec"
)

// keptEnv are inherited even with [RunnerOptions.NoInheritEnv].
var keptEnv = []string{"PATH", "HOME"}

// buildEnv returns the environment of tofu runs: environ (or only its
// PATH and HOME unless inherit) without the variables terraform-exec
// manages, then extra, then CHECKPOINT_DISABLE=1 unless set (no update
// check from Terraform). An extra key terraform-exec manages is an error
// naming the key, never the value.
func buildEnv(environ []string, extra map[string]string, inherit bool) (map[string]string, error) {
	if bad := tfexec.ProhibitedEnv(extra); len(bad) > 0 {
		slices.Sort(bad)
		return nil, fmt.Errorf("runner env: %w: %s is set by terraform-exec itself: want provider or backend variables only (pass variables through the variables file)", ErrInvalid, strings.Join(bad, ", "))
	}
	env := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || (!inherit && !slices.Contains(keptEnv, k)) {
			continue
		}
		env[k] = v
	}
	env = tfexec.CleanEnv(env)
	for k, v := range extra {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return nil, fmt.Errorf("runner env: %w: key %q: want a variable name", ErrInvalid, k)
		}
		env[k] = v
	}
	if _, ok := env["CHECKPOINT_DISABLE"]; !ok {
		env["CHECKPOINT_DISABLE"] = "1"
	}
	return env, nil
}
