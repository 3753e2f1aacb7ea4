package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/fakehcloud"
	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/internal/tofutest"
	"github.com/plasmactl/plasma-node/nodes"
)

// noChange ends the plan line of a plan that changes nothing.
const noChange = "0 to create, 0 to update (0 destructive), 0 to replace, 0 to delete"

// flow is one project driven through the plasma-node binary with the
// real tofu and hcloud plugin against a fake Hetzner Cloud API.
type flow struct {
	t       *testing.T
	project string
	fake    *fakehcloud.Fake
	tofu    string
	env     []string
}

func newFlow(t *testing.T, fake *fakehcloud.Fake, token string, state nodes.State, env ...string) *flow {
	t.Helper()
	f := &flow{t: t, project: t.TempDir(), fake: fake, tofu: tofutest.Binary(t)}
	rc := tofutest.CLIConfig(t, tofutest.Mirror(t, tofutest.Hcloud))
	f.env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc, "HCLOUD_TOKEN=", "PG_CONN_STR=", "HOME="+t.TempDir())
	f.env = append(f.env, env...)
	ctx := context.Background()
	f.ok(ctx, "add", "demo", "--provider", "hetzner")
	if _, err := nodes.Open(f.project, nodes.Options{}).UpdatePlatform(ctx, "demo", func(p *nodes.Platform) error {
		p.Infrastructure.API = nodes.API{URI: fake.Endpoint(), Token: token}
		p.Infrastructure.Zone = "fsn1"
		p.Infrastructure.State = state
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *flow) cmd(ctx context.Context, args ...string) *exec.Cmd {
	if slices.Contains([]string{"provision", "join", "destroy"}, args[0]) {
		args = append(args, "--tofu", f.tofu)
	}
	c := exec.CommandContext(ctx, filepath.Join(bin, "plasma-node"), append([]string{"--dir", f.project}, args...)...)
	c.Env = f.env
	return c
}

// ok runs plasma-node and returns its output, failing the test on an
// error.
func (f *flow) ok(ctx context.Context, args ...string) string {
	f.t.Helper()
	out, err := f.cmd(ctx, args...).CombinedOutput()
	if err != nil {
		f.t.Fatalf("plasma-node %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// nodes returns the node files by hostname.
func (f *flow) nodes() map[string]*nodes.Node {
	f.t.Helper()
	ns, err := nodes.Open(f.project, nodes.Options{}).Nodes(context.Background(), "demo")
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[string]*nodes.Node{}
	for _, n := range ns {
		out[n.Hostname] = n
	}
	return out
}

// check compares the node files with the fake's servers: one node per
// server, same name, id and public IP.
func (f *flow) check(step string, want int) {
	f.t.Helper()
	servers, ns := f.fake.Servers(), f.nodes()
	if len(servers) != want || len(ns) != want {
		f.t.Fatalf("%s: fake holds %d servers, %d node files; want %d of each", step, len(servers), len(ns), want)
	}
	for _, s := range servers {
		n := ns[s.Name]
		switch {
		case n == nil:
			f.t.Errorf("%s: server %s (%d) has no node file", step, s.Name, s.ID)
		case n.ProviderMetadata.ServerID != strconv.FormatInt(s.ID, 10) || n.Network.PublicIP == "" || n.Network.PublicIP != s.PublicIPv4 || n.Network.PrivateIP == "":
			f.t.Errorf("%s: node %s has server %q, public IP %q, private IP %q; want server %d, public IP %s and a private IP",
				step, s.Name, n.ProviderMetadata.ServerID, n.Network.PublicIP, n.Network.PrivateIP, s.ID, s.PublicIPv4)
		}
	}
}

func (f *flow) count() int {
	f.t.Helper()
	p, err := nodes.Open(f.project, nodes.Options{}).Platform(context.Background(), "demo")
	if err != nil {
		f.t.Fatal(err)
	}
	return p.Pools["web"].Count
}

// run is the flow: provision 3, the same again plans no change,
// the state deleted (dropState) then again no create, count 4 gives one
// create, a lowered count deletes the last server (only with
// --allow-delete), two servers made outside joined (by display name and with
// --hostname), a provision stays converged, destroy --force leaves no
// server and no node file. dropState deletes the state; between runs
// right after the count of 4.
func (f *flow) run(ctx context.Context, dropState func(), between func()) {
	t := f.t
	out := f.ok(ctx, "provision", "demo", "-z", "web:cx22:3", "--auto-approve")
	if !strings.Contains(out, "3 to create") {
		t.Errorf("first provision does not plan 3 creates:\n%s", out)
	}
	f.check("provision 3", 3)

	out = f.ok(ctx, "provision", "demo", "-z", "web:cx22:3", "--auto-approve")
	if !strings.Contains(out, noChange) {
		t.Errorf("same provision again is not a no-change run:\n%s", out)
	}
	dropState()
	out = f.ok(ctx, "provision", "demo", "-z", "web:cx22:3", "--auto-approve")
	if !strings.Contains(out, "Plan: 3 to import, "+noChange) {
		t.Errorf("provision after the state was deleted does not adopt the 3 servers without a change:\n%s", out)
	}
	f.check("state deleted", 3)

	out = f.ok(ctx, "provision", "demo", "-z", "web:cx22:4", "--auto-approve")
	if !strings.Contains(out, "1 to create") {
		t.Errorf("count 4 does not plan one create:\n%s", out)
	}
	f.check("count 4", 4)
	between()
	n := len(f.fake.Servers())

	// Lowering the count: --auto-approve alone deletes nothing; with
	// --allow-delete the highest-numbered server goes, and its node file.
	lower := fmt.Sprintf("web:cx22:%d", n-1)
	last := fmt.Sprintf("demo-web-%03d", n)
	refused, err := f.cmd(ctx, "provision", "demo", "-z", lower, "--auto-approve").CombinedOutput()
	if err == nil || !strings.Contains(string(refused), "--allow-delete") {
		t.Errorf("lowering under --auto-approve alone: %v, want a refusal naming --allow-delete\n%s", err, refused)
	}
	f.check("lowering refused", n)
	out2 := f.ok(ctx, "provision", "demo", "-z", lower, "--auto-approve", "--allow-delete")
	if !strings.Contains(out2, "1 to delete") || !strings.Contains(out2, "node "+last+"@demo") {
		t.Errorf("lowering with --allow-delete does not delete %s:\n%s", last, out2)
	}
	n--
	f.check("lowered", n)
	if _, ok := f.nodes()[last]; ok {
		t.Errorf("node file of %s kept after its server was deleted", last)
	}

	a := f.fake.AddServer("handmade", "cx22", "debian-12", "fsn1")
	b := f.fake.AddServer("made-by-hand", "cx22", "debian-12", "fsn1")
	out = f.ok(ctx, "join", "demo", "--server-id", strconv.FormatInt(a.ID, 10), "--pool", "web", "--auto-approve")
	if !strings.Contains(out, "as node handmade@demo") {
		t.Errorf("join by display name:\n%s", out)
	}
	out = f.ok(ctx, "join", "demo", "--server-id", strconv.FormatInt(b.ID, 10), "--pool", "web", "--hostname", "custom", "--auto-approve")
	if !strings.Contains(out, "as node custom@demo") {
		t.Errorf("join with --hostname:\n%s", out)
	}
	f.check("joined", n+2) // the fake's server b is now named custom
	if got := f.count(); got != n+2 {
		t.Errorf("pool count after two joins = %d, want %d", got, n+2)
	}
	out = f.ok(ctx, "provision", "demo", "--auto-approve")
	if !strings.Contains(out, noChange) {
		t.Errorf("provision after the joins is not converged:\n%s", out)
	}

	out = f.ok(ctx, "destroy", "demo", "--force")
	if got := strings.Count(out, "Removed node "); got != n+2 {
		t.Errorf("destroy removed %d nodes, want %d:\n%s", got, n+2, out)
	}
	if s := f.fake.Servers(); len(s) != 0 {
		t.Errorf("fake servers after destroy: %+v, want none", s)
	}
	if ns := f.nodes(); len(ns) != 0 {
		t.Errorf("node files after destroy: %d, want none", len(ns))
	}
}

// TestProvisionJoinDestroyFlow runs the flow with the default local
// backend, whose state is transient: no state file is left after a run.
func TestProvisionJoinDestroyFlow(t *testing.T) {
	t.Parallel() // mostly waiting on tofu and the plugin: beside the boots (TestMain)
	token := strings.Repeat("f", 64)
	fake := fakehcloud.Start(token)
	defer fake.Close()
	f := newFlow(t, fake, token, nodes.State{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	state := filepath.Join(f.project, ".plasma", "node", "demo", "terraform.tfstate")
	f.run(ctx, func() {
		if _, err := os.Stat(state); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("local state after a run: %v, want none (transient)", err)
		}
	}, func() {})
	assertNoSecretIn(t, f.project, token)
}

// TestProvisionJoinDestroyFlowPG runs the flow with a real PostgreSQL as
// the pg backend: the state is kept there (one row in the platform's
// schema), dropping the schema is deleting the state, the connection
// string never lands in a file, and a provision from a second checkout
// of the project while the first one's apply is in progress is refused
// by tofu's state lock.
func TestProvisionJoinDestroyFlowPG(t *testing.T) {
	t.Parallel() // mostly waiting on tofu and the plugin: beside the boots (TestMain)
	pg := pgtest.Start(t)
	token := strings.Repeat("f", 64)
	fake := fakehcloud.Start(token)
	defer fake.Close()
	f := newFlow(t, fake, token, nodes.State{Backend: "pg"}, "PG_CONN_STR="+pg.ConnString())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	f.run(ctx, func() {
		if got := strings.TrimSpace(pg.Exec(t, "select count(*) from plasma_node_demo.states")); got != "1" {
			t.Errorf("states in pg: %s, want 1 (state kept)", got)
		}
		pg.Exec(t, "drop schema plasma_node_demo cascade")
	}, func() {
		// A second checkout of the project, sharing the pg state.
		other := &flow{t: t, project: t.TempDir(), fake: fake, tofu: f.tofu, env: f.env}
		if err := os.CopyFS(filepath.Join(other.project, nodes.PlatformsDir), os.DirFS(filepath.Join(f.project, nodes.PlatformsDir))); err != nil {
			t.Fatal(err)
		}
		arrived, release := fake.HoldCreates()
		first := f.cmd(ctx, "provision", "demo", "-z", "web:cx22:5", "--auto-approve")
		var firstOut bytes.Buffer
		first.Stdout, first.Stderr = &firstOut, &firstOut
		if err := first.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- first.Wait() }()
		select {
		case <-arrived:
		case err := <-done:
			release()
			t.Fatalf("first provision ended before its create: %v\n%s", err, firstOut.String())
		}
		out, err := other.cmd(ctx, "provision", "demo", "-z", "web:cx22:5", "--auto-approve").CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "state locked") {
			t.Errorf("provision from a second checkout during an apply: %v, want exit 1 saying the state is locked\n%s", err, out)
		}
		release()
		if err := <-done; err != nil {
			t.Fatalf("first provision: %v\n%s", err, firstOut.String())
		}
		f.check("count 5", 5)
	})
	assertNoSecretIn(t, f.project, pgtest.Password)
	assertNoSecretIn(t, f.project, token)
}

// assertNoSecretIn fails if any file under dir but platform.yaml (where
// the test put the fake's token) holds secret.
func assertNoSecretIn(t *testing.T, dir, secret string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "platform.yaml" || strings.Contains(p, "/.terraform/providers/") {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds a secret", p)
		}
		return nil
	})
}
