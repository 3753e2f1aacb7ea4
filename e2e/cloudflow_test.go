package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/internal/tofutest"
	"github.com/plasmactl/plasma-node/nodes"
)

// cloudFlow is one project of platform demo driven through the
// plasma-node binary with the real tofu and a provider plugin of the
// mirror against a fake cloud API, its credentials in the environment
// only.
type cloudFlow struct {
	t     *testing.T
	ctx   context.Context
	dir   string
	tofu  string
	env   []string
	store *nodes.Store
	calls func() []string
}

// newCloudFlow makes the project, adds platform demo of provider with
// the plugin (tofutest's NAMESPACE/TYPE/VERSION) from the mirror, and
// lets set change its platform.yaml; env are the credential variables.
// calls lists the fake's calls, for failure messages.
func newCloudFlow(t *testing.T, ctx context.Context, provider, plugin string, calls func() []string, set func(*nodes.Platform), env ...string) *cloudFlow {
	t.Helper()
	rc := tofutest.CLIConfig(t, tofutest.Mirror(t, plugin))
	f := &cloudFlow{t: t, ctx: ctx, dir: t.TempDir(), tofu: tofutest.Binary(t), calls: calls}
	f.env = append(append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc, "HOME="+t.TempDir()), env...)
	f.store = nodes.Open(f.dir, nodes.Options{})
	f.ok("add", "demo", "--provider", provider)
	if _, err := f.store.UpdatePlatform(ctx, "demo", func(p *nodes.Platform) error { set(p); return nil }); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *cloudFlow) cmd(args ...string) *exec.Cmd {
	if slices.Contains([]string{"provision", "join", "destroy"}, args[0]) {
		args = append(args, "--tofu", f.tofu)
	}
	c := exec.CommandContext(f.ctx, filepath.Join(bin, "plasma-node"), append([]string{"--dir", f.dir}, args...)...)
	c.Env = f.env
	return c
}

// ok runs plasma-node and returns its output, failing the test on an
// error.
func (f *cloudFlow) ok(args ...string) string {
	f.t.Helper()
	out, err := f.cmd(args...).CombinedOutput()
	if err != nil {
		f.t.Fatalf("plasma-node %s: %v\n%s\nfake calls: %v", strings.Join(args, " "), err, out, f.calls())
	}
	return string(out)
}

// nodes returns the node files by server id.
func (f *cloudFlow) nodes() map[string]*nodes.Node {
	f.t.Helper()
	list, err := f.store.Nodes(f.ctx, "demo")
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[string]*nodes.Node{}
	for _, n := range list {
		out[n.ProviderMetadata.ServerID] = n
	}
	return out
}

// scale runs the provision steps every cloud's flow shares, for pools of
// spec(n) servers: provision 3, the same again changes nothing, count 4
// creates one, a lowered count deletes the last server only with
// --allow-delete, destroy removes the rest; check compares node files
// and the fake's servers after each step.
func (f *cloudFlow) scale(spec func(n int) string, check func(step string, want int)) {
	t := f.t
	if out := f.ok("provision", "demo", "-z", spec(3), "--auto-approve"); !strings.Contains(out, "3 to create") {
		t.Errorf("first provision does not plan 3 creates:\n%s", out)
	}
	check("provision 3", 3)
	if out := f.ok("provision", "demo", "-z", spec(3), "--auto-approve"); !strings.Contains(out, noChange) {
		t.Errorf("same provision again is not a no-change run:\n%s", out)
	}
	if out := f.ok("provision", "demo", "-z", spec(4), "--auto-approve"); !strings.Contains(out, "1 to create") {
		t.Errorf("count 4 does not plan one create:\n%s", out)
	}
	check("count 4", 4)
	refused, err := f.cmd("provision", "demo", "-z", spec(3), "--auto-approve").CombinedOutput()
	if err == nil || !strings.Contains(string(refused), "--allow-delete") {
		t.Errorf("lowering under --auto-approve alone: %v, want a refusal naming --allow-delete\n%s", err, refused)
	}
	check("lowering refused", 4)
	out := f.ok("provision", "demo", "-z", spec(3), "--auto-approve", "--allow-delete")
	if !strings.Contains(out, "1 to delete") || !strings.Contains(out, "demo-db-004@demo") {
		t.Errorf("lowering with --allow-delete does not delete demo-db-004:\n%s", out)
	}
	check("lowered", 3)
	if out := f.ok("destroy", "demo", "--force"); strings.Count(out, "Removed node ") != 3 {
		t.Errorf("destroy does not remove 3 nodes:\n%s", out)
	}
	check("destroyed", 0)
}

// converged checks that a provision after joins adopts the three joined
// servers without a create, replacement or delete (names may be written
// back), and that the next one plans no change.
func (f *cloudFlow) converged() {
	out := f.ok("provision", "demo", "--auto-approve")
	if !strings.Contains(out, "Plan: 3 to import, 0 to create") || !strings.Contains(out, "0 destructive), 0 to replace, 0 to delete") {
		f.t.Errorf("provision after the joins:\n%s", out)
	}
	if out := f.ok("provision", "demo", "--auto-approve"); !strings.Contains(out, noChange) {
		f.t.Errorf("second provision after the joins is not converged:\n%s", out)
	}
}
