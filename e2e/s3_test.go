package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/tofutest"
)

// startS3 and s3Server give the s3 state backend test a throwaway
// S3-compatible server: SeaweedFS's weed server (master, volume, filer and
// its S3 gateway) on loopback ports in a temporary folder, with one
// identity and one bucket.
//
// It installs nothing: without a weed binary (.ci/tools.sh builds
// .tools/bin/weed; PLASMA_WEED names another) the test is skipped, or
// failed when PLASMA_E2E=1.

// envWeed names a weed binary, overriding .tools/bin/weed.
const envWeed = "PLASMA_WEED"

// Credentials of the server's one identity. The secret key is looked for
// by tests to prove it is never written to a file.
const (
	s3AccessKey = "plasmatestaccesskey"
	s3SecretKey = "s3test-secret-key-5e1a9c"
	// s3Region is any name: the server does not check it.
	s3Region = "site-1"
	// s3Bucket is the bucket the server is started with.
	s3Bucket = "plasma-state"
)

// s3Server is a running SeaweedFS with its S3 gateway.
type s3Server struct {
	// Endpoint is the S3 gateway's URL, http://127.0.0.1:PORT.
	Endpoint string
	// Filer is the filer's URL; buckets are its folders /buckets/NAME.
	Filer string
	dir   string
}

// weedBinary returns the weed binary, or calls [tofutest.Missing].
func weedBinary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(envWeed); p != "" {
		return p
	}
	if root := tofutest.ModuleRoot(); root != "" {
		p := filepath.Join(root, ".tools", "bin", "weed")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	if p, err := exec.LookPath("weed"); err == nil {
		return p
	}
	tofutest.Missing(t, "no SeaweedFS weed: set %s, or build .tools/bin/weed with .ci/tools.sh", envWeed)
	return ""
}

// startS3 starts a server for t, stopped at t's end, with the identity
// s3AccessKey/s3SecretKey and the bucket s3Bucket.
func startS3(t testing.TB) *s3Server {
	t.Helper()
	bin := weedBinary(t)
	dir := t.TempDir()
	ports := freePorts(t, 8)
	cfg, err := json.Marshal(map[string]any{"identities": []any{map[string]any{
		"name":        "plasma",
		"credentials": []any{map[string]string{"accessKey": s3AccessKey, "secretKey": s3SecretKey}},
		"actions":     []string{"Admin", "Read", "List", "Tagging", "Write"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "s3.json")
	if err := os.WriteFile(conf, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	p := func(i int) string { return strconv.Itoa(ports[i]) }
	args := []string{"server", "-dir=" + data, "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-master.port=" + p(0), "-master.port.grpc=" + p(1), "-volume.port=" + p(2), "-volume.port.grpc=" + p(3),
		"-filer", "-filer.port=" + p(4), "-filer.port.grpc=" + p(5),
		"-s3", "-s3.port=" + p(6), "-s3.port.grpc=" + p(7), "-s3.config=" + conf,
		"-master.volumeSizeLimitMB=64", "-volume.max=8"}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, args...)
	logf, err := os.Create(filepath.Join(dir, "weed.log"))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start weed: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cancel()
		<-done
		logf.Close()
	})
	s := &s3Server{Endpoint: "http://127.0.0.1:" + p(6), Filer: "http://127.0.0.1:" + p(4), dir: dir}
	log := func() string { b, _ := os.ReadFile(logf.Name()); return string(tailBytes(b, 4096)) }
	start := time.Now()
	deadline := time.Now().Add(90 * time.Second)
	for {
		if s.ready() {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("weed server ended: %v\n%s", err, log())
		case <-time.After(250 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("weed server not ready in 90 s\n%s", log())
		}
	}
	s.mkBucket(t, s3Bucket)
	t.Logf("s3test: weed server ready in %v", time.Since(start).Round(time.Millisecond))
	return s
}

// ready reports whether the S3 gateway answers and the filer takes a
// write (a volume is up).
func (s *s3Server) ready() bool {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(s.Endpoint)
	if err != nil {
		return false
	}
	resp.Body.Close()
	req, _ := http.NewRequest("PUT", s.Filer+"/s3test-probe/ready", strings.NewReader("ok"))
	resp, err = c.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode/100 == 2
}

// mkBucket makes bucket name as the S3 gateway sees buckets: a folder
// under the filer's /buckets.
func (s *s3Server) mkBucket(t testing.TB, name string) {
	t.Helper()
	req, _ := http.NewRequest("POST", s.Filer+"/buckets/"+name+"/?op=mkdir", nil)
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("make bucket %s: %v", name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		t.Fatalf("make bucket %s: %s %s", name, resp.Status, b)
	}
}

// Object returns the object key of s3Bucket, read through the filer;
// found is false when there is none.
func (s *s3Server) Object(t testing.TB, key string) (data []byte, found bool) {
	t.Helper()
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(s.Filer + "/buckets/" + s3Bucket + "/" + key)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("read %s: %s %v", key, resp.Status, err)
	}
	return b, true
}

// Delete removes the object key of s3Bucket, through the filer.
func (s *s3Server) Delete(t testing.TB, key string) {
	t.Helper()
	req, _ := http.NewRequest("DELETE", s.Filer+"/buckets/"+s3Bucket+"/"+key, nil)
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusNotFound {
		t.Fatalf("delete %s: %s", key, resp.Status)
	}
}

// s3Env is the environment tofu's s3 backend takes the credentials from.
func s3Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + s3AccessKey, "AWS_SECRET_ACCESS_KEY=" + s3SecretKey}
}

func tailBytes(b []byte, n int) []byte {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return bytes.TrimSpace(b)
}

// freePorts returns n distinct free loopback TCP ports.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ls []net.Listener
	var out []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return out
}

// TestS3ServerRefusesAnonymousWrites: the gateway is up with its bucket,
// and an unsigned PUT is refused, as an S3 service with identities
// refuses it: credentials are really checked.
func TestS3ServerRefusesAnonymousWrites(t *testing.T) {
	s := startS3(t)
	req, _ := http.NewRequest("PUT", s.Endpoint+"/"+s3Bucket+"/x", strings.NewReader("x"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("anonymous PUT: %s, want 403", resp.Status)
	}
	if _, found := s.Object(t, "x"); found {
		t.Error("the anonymous PUT wrote its object")
	}
}
