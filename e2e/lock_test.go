package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/fakehcloud"
	"github.com/plasmactl/plasma-node/internal/tofutest"
	"github.com/plasmactl/plasma-node/nodes"
)

// refuseWithin is how fast a provision of a locked platform must give up:
// at once, not after a wait for the holder. It includes starting the
// binary and reading the project.
const refuseWithin = 2 * time.Second

// TestSecondProvisionIsRefused runs `plasma-node provision` with the real
// tofu and hcloud plugin against the fake Hetzner API, which holds the
// server create so that the apply is in progress. A second provision of
// the same platform started then exits 1 at once, naming the first run as
// the holder (its pid), and changes nothing; once the create is released
// the first run finishes with its node file, and a third run succeeds.
func TestSecondProvisionIsRefused(t *testing.T) {
	tofuBin := tofutest.Binary(t)
	cliConfig := tofutest.CLIConfig(t, tofutest.Mirror(t, tofutest.Hcloud))
	token := strings.Repeat("f", 64)
	fake := fakehcloud.Start(token)
	defer fake.Close()

	project := t.TempDir()
	pn := func(ctx context.Context, args ...string) *exec.Cmd {
		c := exec.CommandContext(ctx, filepath.Join(bin, "plasma-node"), append([]string{"--dir", project}, args...)...)
		c.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+cliConfig, "HCLOUD_TOKEN=", "HOME="+t.TempDir())
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if out, err := pn(ctx, "add", "demo", "--provider", "hetzner").CombinedOutput(); err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}
	if _, err := nodes.Open(project, nodes.Options{}).UpdatePlatform(ctx, "demo", func(p *nodes.Platform) error {
		p.Infrastructure.API = nodes.API{URI: fake.Endpoint(), Token: token}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	arrived, release := fake.HoldCreates()
	released := false
	defer func() {
		if !released {
			release()
		}
	}()
	first := pn(ctx, "provision", "demo", "-z", "web:cx22:1", "--auto-approve", "--tofu", tofuBin)
	var firstOut bytes.Buffer
	first.Stdout, first.Stderr = &firstOut, &firstOut
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	firstDone := make(chan error, 1)
	go func() { firstDone <- first.Wait() }()
	select {
	case <-arrived:
	case err := <-firstDone:
		t.Fatalf("first provision ended before creating a server: %v\n%s", err, firstOut.String())
	case <-ctx.Done():
		t.Fatalf("first provision never reached the server create\n%s", firstOut.String())
	}
	before := snapshotFiles(t, project)

	start := time.Now()
	out, err := pn(ctx, "provision", "demo", "-z", "web:cx22:2", "--auto-approve", "--tofu", tofuBin).CombinedOutput()
	took := time.Since(start)
	t.Logf("second provision refused after %v: %s", took, bytes.TrimSpace(out))
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("second provision: %v, want exit 1\n%s", err, out)
	}
	holder := fmt.Sprintf("plasma-node provision (pid %d,", first.Process.Pid)
	if !strings.Contains(string(out), "locked") || !strings.Contains(string(out), holder) {
		t.Errorf("second provision's message does not say the platform is locked by %q:\n%s", holder, out)
	}
	if took > refuseWithin {
		t.Errorf("second provision took %v to give up, want under %v (refused at once)", took, refuseWithin)
	}
	if diff := diffFiles(before, snapshotFiles(t, project)); diff != "" {
		t.Errorf("the refused run changed the project:\n%s", diff)
	}

	release()
	released = true
	if err := <-firstDone; err != nil {
		t.Fatalf("first provision: %v\n%s", err, firstOut.String())
	}
	if !strings.Contains(firstOut.String(), "Node demo-web-001@demo") {
		t.Errorf("first provision output:\n%s", firstOut.String())
	}
	if n := len(fake.Servers()); n != 1 {
		t.Errorf("fake holds %d servers after the first run, want 1", n)
	}
	if out, err := pn(ctx, "provision", "demo", "-z", "web:cx22:2", "--auto-approve", "--tofu", tofuBin).CombinedOutput(); err != nil {
		t.Fatalf("provision after the lock was released: %v\n%s", err, out)
	}
	if n := len(fake.Servers()); n != 2 {
		t.Errorf("fake holds %d servers after the third run, want 2", n)
	}
}

// snapshotFiles returns every file of the project but the lock and the
// tofu working directory, with its content.
func snapshotFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() && rel == ".plasma" {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() != ".lock" {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// diffFiles names the files added, removed or changed from a to b.
func diffFiles(a, b map[string]string) string {
	var d []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			d = append(d, "removed "+k)
		} else if w != v {
			d = append(d, "changed "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			d = append(d, "added "+k)
		}
	}
	return strings.Join(d, "\n")
}
