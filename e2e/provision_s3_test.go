package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/fakehcloud"
	"github.com/plasmactl/plasma-node/nodes"
)

// TestProvisionJoinDestroyFlowS3 runs the flow with a real S3 server
// (SeaweedFS) as the s3 backend, named by its endpoint only: the
// settings tofu needs offline (path style, no credential validation, no
// account id, no metadata service, any region) come with the endpoint.
// The state is kept as one object in the bucket; deleting it is deleting
// the state; the credentials come only from the environment and never
// land in a file; and a provision from a second checkout while the
// first's apply is in progress is refused by tofu's lock object
// (use_lockfile), naming its holder, with the state intact after.
func TestProvisionJoinDestroyFlowS3(t *testing.T) {
	t.Parallel() // mostly waiting on tofu and the plugin: beside the boots (TestMain)
	s3 := startS3(t)
	token := strings.Repeat("f", 64)
	fake := fakehcloud.Start(token)
	defer fake.Close()
	state := nodes.State{Backend: "s3", Bucket: s3Bucket, Region: s3Region, Endpoint: s3.Endpoint}
	f := newFlow(t, fake, token, state, s3Env()...)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const key = "plasma-node/demo/terraform.tfstate"
	f.run(ctx, func() {
		data, found := s3.Object(t, key)
		if !found || !bytes.Contains(data, []byte(`"hcloud_server"`)) {
			t.Errorf("state object %s: found %v, %d bytes; want the state of the servers", key, found, len(data))
		}
		if _, found := s3.Object(t, key+".tflock"); found {
			t.Errorf("a lock object is left after the run")
		}
		s3.Delete(t, key)
	}, func() {
		// A second checkout of the project, sharing the s3 state.
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
		if _, found := s3.Object(t, key+".tflock"); !found {
			t.Errorf("no lock object %s.tflock while the first apply runs", key)
		}
		out, err := other.cmd(ctx, "provision", "demo", "-z", "web:cx22:5", "--auto-approve").CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "state locked") || !strings.Contains(string(out), "Who:") {
			t.Errorf("provision from a second checkout during an apply: %v, want exit 1 saying the state is locked and by whom\n%s", err, out)
		}
		release()
		if err := <-done; err != nil {
			t.Fatalf("first provision: %v\n%s", err, firstOut.String())
		}
		f.check("count 5", 5)
		// The state is whole: the second checkout, now alone, plans no change.
		if out := other.ok(ctx, "provision", "demo", "-z", "web:cx22:5", "--auto-approve"); !strings.Contains(out, noChange) {
			t.Errorf("the second checkout after the first's apply is not a no-change run:\n%s", out)
		}
	})
	assertNoSecretIn(t, f.project, s3SecretKey)
	assertNoSecretIn(t, f.project, token)
}
