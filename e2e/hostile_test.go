package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// loopbacks are the listen addresses the hostile probes run over: IPv4
// and IPv6.
var loopbacks = []string{"127.0.0.1:0", "[::1]:0"}

// TestServeRefusesHostileBodies posts answer bodies of wrong types, deep
// nesting and one byte over 1 MiB to node-provisioner serve, over IPv4
// and IPv6: each gets 400 (the one over 1 MiB 413), and the server
// answers the real installer afterwards.
func TestServeRefusesHostileBodies(t *testing.T) {
	for _, listen := range loopbacks {
		t.Run(listen, func(t *testing.T) { serveRefusesHostileBodies(t, listen) })
	}
}

func serveRefusesHostileBodies(t *testing.T, listen string) {
	e := newProvisionerEnv(t)
	e.run(t, "register", "pve7", "--mac", "52:54:00:ba:5e:11", "--boot-disk", "nvme0n1")
	url, _ := e.serve(t, "--http", listen)
	real, err := os.ReadFile("../answer/testdata/sysinfo/pve-9.2-synthetic.json")
	if err != nil {
		t.Fatal(err)
	}
	over := append(bytes.Repeat([]byte(" "), 1<<20+1-len(real)), real...)
	bodies := map[string][]byte{
		"an array":                           []byte(`[]`),
		"a string":                           []byte(`"x"`),
		"a number":                           []byte(`1`),
		"null":                               []byte(`null`),
		"100 000 open brackets":              bytes.Repeat([]byte("["), 100_000),
		"100 000 nested arrays in an object": append([]byte(`{"network_interfaces":`), bytes.Repeat([]byte("["), 100_000)...),
		"1 MiB + 1 bytes of a real body":     over,
	}
	client := &http.Client{Timeout: 10 * time.Second}
	for name, b := range bodies {
		t.Run(name, func(t *testing.T) {
			resp, err := client.Post(url, "application/json", bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			// Too large is 413, as discovery and the API say it.
			want := http.StatusBadRequest
			if len(b) > 1<<20 {
				want = http.StatusRequestEntityTooLarge
			}
			if resp.StatusCode != want || len(bytes.TrimSpace(msg)) == 0 {
				t.Errorf("status %d %q, want %d with a message", resp.StatusCode, msg, want)
			}
		})
	}
	resp, err := client.Post(url, "application/json", bytes.NewReader(real))
	if err != nil {
		t.Fatalf("the server stopped answering after the hostile bodies: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("the real installer after the hostile bodies: %d, want 200", resp.StatusCode)
	}
}

// TestServeRefusesHostilePaths sends traversal, encoded traversal, NUL
// bytes, over-long names and a symlink leaving the assets folder to
// serve's HTTP port, over IPv4 and IPv6: nothing from outside is ever
// served.
func TestServeRefusesHostilePaths(t *testing.T) {
	for _, listen := range loopbacks {
		t.Run(listen, func(t *testing.T) { serveRefusesHostilePaths(t, listen) })
	}
}

func serveRefusesHostilePaths(t *testing.T, listen string) {
	e := newProvisionerEnv(t)
	const outside = "content-from-outside-the-roots"
	if err := os.MkdirAll(filepath.Join(e.state, "assets", "rel1"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(e.state, "outside.txt"), filepath.Join(e.state, "assets", "outside.txt"), filepath.Join(e.home, "outside.txt")} {
		if err := os.WriteFile(p, []byte(outside), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(e.state, "assets", "rel1", "inside.txt"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(e.home, "outside.txt"), filepath.Join(e.state, "assets", "rel1", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../outside.txt", filepath.Join(e.state, "assets", "rel1", "rel-link")); err != nil {
		t.Fatal(err)
	}
	url, _ := e.serve(t, "--http", listen)
	base := strings.TrimSuffix(url, "/answer")
	host := strings.TrimPrefix(base, "http://")
	long := strings.Repeat("a", 10_000)
	paths := []string{
		"/assets/rel1/../../outside.txt",
		"/assets/rel1/..%2F..%2Foutside.txt",
		"/assets/rel1/%2e%2e%2f%2e%2e%2foutside.txt",
		"/assets/%2e%2e/outside.txt",
		"/assets/rel1/%2e%2e",
		"/assets/..%2F/outside.txt",
		"/assets/rel1/link",
		"/assets/rel1/rel-link",
		"/assets/rel1/inside.txt%00",
		"/assets/rel1/inside.txt%00.iso",
		"/assets/rel1/" + long,
		"/assets/" + long + "/inside.txt",
		"/" + long,
		"/first-boot/%2e%2e%2f%2e%2e%2foutside.txt",
		"/first-boot/" + long,
		"/webhook/..%2F..%2Foutside.txt",
		"/answer/../outside.txt",
		"/%2e%2e/%2e%2e/outside.txt",
		"/boot.ipxe/../outside.txt",
		"//etc/passwd",
	}
	client := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range paths {
		for _, method := range []string{"GET", "POST"} {
			req, err := http.NewRequest(method, base+p, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("%s %.60s: %v", method, p, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 || strings.Contains(string(b), outside) {
				t.Errorf("%s %.60s: %d %.200q", method, p, resp.StatusCode, b)
			}
		}
	}
	// Raw request lines, which net/http's client would clean up.
	for _, line := range []string{
		"GET /assets/rel1/../../outside.txt HTTP/1.1",
		"GET ../outside.txt HTTP/1.1",
		"GET /assets/rel1/..\\..\\outside.txt HTTP/1.1",
		"GET /assets/rel1/inside.txt\x00 HTTP/1.1",
		"GET /" + long + " HTTP/1.1",
	} {
		conn, err := net.DialTimeout("tcp", host, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(conn, line+"\r\nHost: "+host+"\r\nConnection: close\r\n\r\n")
		b, _ := io.ReadAll(conn)
		conn.Close()
		if bytes.HasPrefix(b, []byte("HTTP/1.1 200")) || bytes.Contains(b, []byte(outside)) {
			t.Errorf("raw %.60q: %.200q", line, b)
		}
	}
	// The server still answers, and serves what is inside its root.
	resp, err := client.Get(base + "/assets/rel1/inside.txt")
	if err != nil {
		t.Fatalf("the server stopped answering: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "inside" {
		t.Errorf("GET an asset inside the root: %d %q", resp.StatusCode, b)
	}
}

// laughs is a YAML alias bomb: nine levels of nine aliases.
const laughs = `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
`

// TestListRefusesYAMLBombs puts alias bombs and deep nesting into node
// and platform files: plasma-node list (show for a platform file) exits 2
// within 2 s, naming the file and what is wrong with it.
func TestListRefusesYAMLBombs(t *testing.T) {
	tests := map[string]struct {
		file, content, msg string
		cmd                []string
	}{
		"list refuses an alias bomb in a node file":        {"nodes/bomb.yaml", laughs + "hostname: bomb\nlabels: *i\n", "aliases", []string{"list"}},
		"list refuses an alias bomb in a node's zones":     {"nodes/bomb.yaml", laughs + "hostname: bomb\nzones: *i\n", "aliases", []string{"list"}},
		"list refuses an unused alias bomb in a node file": {"nodes/bomb.yaml", laughs + "hostname: bomb\n", "aliases", []string{"list"}},
		"list refuses deep nesting in a node file":         {"nodes/deep.yaml", "hostname: deep\nlabels: " + strings.Repeat("[", 100_000) + "\n", "deep.yaml", []string{"list"}},
		"show refuses an alias bomb in a platform file":    {"platform.yaml", laughs + "name: plat1\ninfrastructure: {metal_provider: manual}\n", "aliases", []string{"show", "plat1"}},
		"show refuses deep nesting in a platform file":     {"platform.yaml", "name: plat1\nx: " + strings.Repeat("{a: ", 100_000) + "\n", "platform.yaml", []string{"show", "plat1"}},
		"list refuses an alias bomb in a platform file":    {"platform.yaml", laughs + "name: plat1\ninfrastructure: {metal_provider: manual}\n", "aliases", []string{"list"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			project := t.TempDir()
			pn := func(ctx context.Context, args ...string) *exec.Cmd {
				return exec.CommandContext(ctx, filepath.Join(bin, "plasma-node"), append([]string{"--dir", project}, args...)...)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if out, err := pn(ctx, "add", "plat1", "--domain", "example.com").CombinedOutput(); err != nil {
				t.Fatalf("add plat1: %v\n%s", err, out)
			}
			if out, err := pn(ctx, "add", "plat1", "--hostname", "good").CombinedOutput(); err != nil {
				t.Fatalf("add good: %v\n%s", err, out)
			}
			if err := os.WriteFile(filepath.Join(project, "platforms", "plat1", tc.file), []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			out, err := pn(ctx, tc.cmd...).CombinedOutput()
			took := time.Since(start)
			if took > 2*time.Second {
				t.Errorf("%v took %v, want under 2s", tc.cmd, took)
			}
			if len(out) > 4096 {
				t.Errorf("%v printed %d bytes, want a short message", tc.cmd, len(out))
			}
			// list shows a broken node file (issue 19) or platform file
			// (issue 37) as a row with its error and exits 1; any other
			// refusal is bad input, exit 2.
			want := 2
			if tc.cmd[0] == "list" {
				want = 1
				if !strings.Contains(string(out), "BROKEN") || (strings.HasPrefix(tc.file, "nodes/") && !strings.Contains(string(out), "good")) {
					t.Errorf("%v does not list the broken file's row (and the good node beside a broken node file):\n%.500s", tc.cmd, out)
				}
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != want {
				t.Errorf("%v: %v, want exit %d\n%.500s", tc.cmd, err, want, out)
			}
			if !strings.Contains(string(out), filepath.Base(tc.file)) || !strings.Contains(string(out), tc.msg) {
				t.Errorf("%v's message does not name the file and %q:\n%.500s", tc.cmd, tc.msg, out)
			}
		})
	}
}
