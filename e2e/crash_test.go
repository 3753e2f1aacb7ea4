package e2e

import (
	"errors"
	"io/fs"

	"github.com/plasmactl/plasma-node/pxe/registry"

	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/nodes"
)

// tri is what the harness knows of a file or a zone: there, not there,
// or unknown because the writer was killed.
type tri int

const (
	absent tri = iota
	present
	unknown
)

func (v tri) String() string { return [...]string{"absent", "present", "unknown"}[v] }

// crashModel is what the commands that ran to the end imply about the
// files on disk.
type crashModel struct {
	regs  map[string]tri
	nodes map[string]tri
	zones map[string]map[string]tri // node -> zone -> membership
}

// runKilled starts a command and SIGKILLs it after a random 0-20 ms
// unless it ends first. It returns whether it was killed and, if not,
// its exit code.
func runKilled(t *testing.T, rng *rand.Rand, c *exec.Cmd) (killed bool, code int, out string) {
	t.Helper()
	var buf lockedBuffer
	c.Stdout, c.Stderr = &buf, &buf
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Duration(rng.IntN(20_001)) * time.Microsecond):
		c.Process.Signal(syscall.SIGKILL)
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%v did not end after SIGKILL", c.Args)
		}
	}
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return true, -1, buf.String()
		}
		return false, ee.ExitCode(), buf.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return false, 0, buf.String()
}

// TestCrashSafety kills register, unregister, plasma-node add and
// allocate at random points, 200 times (40 with -short), and checks after
// each that every registration and node file parses, that what completed
// is on disk exactly once, and that the next commands run and list
// consistently; temporary files left by a killed writer are ignored by
// readers and removed by the next writer.
func TestCrashSafety(t *testing.T) {
	t.Parallel() // its own folders, no network
	iterations := 200
	if testing.Short() {
		iterations = 40
	}
	e := newProvisionerEnv(t)
	project := t.TempDir()
	pn := func(ctx context.Context, args ...string) *exec.Cmd {
		return exec.CommandContext(ctx, filepath.Join(bin, "plasma-node"), append([]string{"--dir", project}, args...)...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := pn(ctx, "add", "plat1", "--domain", "example.com").CombinedOutput(); err != nil {
		t.Fatalf("add plat1: %v\n%s", err, out)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))

	names := []string{"r0", "r1", "r2", "r3", "r4"}
	hosts := []string{"n0", "n1", "n2", "n3", "n4"}
	zoneNames := []string{"platform.foundation.cluster.control", "platform.foundation.cluster.nodes", "platform.cognition.data"}
	m := crashModel{regs: map[string]tri{}, nodes: map[string]tri{}, zones: map[string]map[string]tri{}}
	for _, h := range hosts {
		m.zones[h] = map[string]tri{}
	}
	kills, tempSeen := 0, 0
	succeeded := map[string]int{} // command -> runs that exited 0
	began := time.Now()
	for i := range iterations {
		var (
			c     *exec.Cmd
			apply func(killed bool, code int)
			label string
		)
		switch op := rng.IntN(4); op {
		case 0:
			name := names[rng.IntN(len(names))]
			mac := fmt.Sprintf("52:54:00:00:%02x:%02x", i/256, i%256)
			c = e.cmd(ctx, "register", name, "--mac", mac, "--boot-disk", "sda")
			label = "register " + name
			apply = func(killed bool, code int) {
				switch {
				case !killed && code == 0:
					m.regs[name] = present
				case !killed:
					t.Errorf("iteration %d: %s exited %d", i, label, code)
				case m.regs[name] != present: // a killed replace leaves one of the two
					m.regs[name] = unknown
				}
			}
		case 1:
			name := names[rng.IntN(len(names))]
			c = e.cmd(ctx, "unregister", name)
			label = "unregister " + name
			apply = func(killed bool, code int) {
				switch {
				case !killed && code == 0:
					if m.regs[name] == absent {
						t.Errorf("iteration %d: %s succeeded for a registration that was not there", i, label)
					}
					m.regs[name] = absent
				case !killed:
					if m.regs[name] == present {
						t.Errorf("iteration %d: %s exited %d for a registration that is there", i, label, code)
					}
					m.regs[name] = absent
				case m.regs[name] != absent:
					m.regs[name] = unknown
				}
			}
		case 2:
			h := hosts[rng.IntN(len(hosts))]
			// A public IP of its own per iteration (at most 200 of them): a
			// random one collided now and then with a node's, a refusal
			// the model does not expect.
			c = pn(ctx, "add", "plat1", "--hostname", h, "--public-ip", fmt.Sprintf("203.0.%d.%d", 113+i/250, i%250+1))
			label = "add --hostname " + h
			apply = func(killed bool, code int) {
				switch {
				case !killed && code == 0:
					if m.nodes[h] == present {
						t.Errorf("iteration %d: %s succeeded for a node that exists", i, label)
					}
					m.nodes[h] = present
					m.zones[h] = map[string]tri{}
				case !killed:
					if m.nodes[h] == absent {
						t.Errorf("iteration %d: %s exited %d for a new node", i, label, code)
					}
					m.nodes[h] = present
				case m.nodes[h] == absent:
					m.nodes[h] = unknown
					m.zones[h] = map[string]tri{}
				}
			}
		case 3:
			h := hosts[rng.IntN(len(hosts))]
			z := zoneNames[rng.IntN(len(zoneNames))]
			want := present
			arg := z
			if rng.IntN(2) == 0 {
				want, arg = absent, z+"-"
			}
			c = pn(ctx, "allocate", h, arg)
			label = "allocate " + h + " " + arg
			apply = func(killed bool, code int) {
				switch {
				case !killed && code == 0:
					if m.nodes[h] == absent {
						t.Errorf("iteration %d: %s succeeded for a missing node", i, label)
					}
					m.nodes[h] = present
					m.zones[h][z] = want
				case !killed:
					// Refused: the node is missing, or removing a zone it
					// does not have; nothing changed.
				case m.nodes[h] != absent && m.zones[h][z] != want:
					m.zones[h][z] = unknown
				}
			}
		}
		killed, code, out := runKilled(t, rng, c)
		if killed {
			kills++
		} else if code == 0 {
			succeeded[strings.Fields(label)[0]]++
		}
		apply(killed, code)
		if t.Failed() {
			t.Fatalf("iteration %d: %s (killed %v, exit %d):\n%s", i, label, killed, code, out)
		}
		tempSeen += checkCrashState(t, ctx, i, label, e, project, pn, &m)
		if t.Failed() {
			t.Fatalf("iteration %d: after %s (killed %v, exit %d):\n%s", i, label, killed, code, out)
		}
	}
	t.Logf("%d iterations, %d killed, %d leftover temporary files seen, completed %v, in %v", iterations, kills, tempSeen, succeeded, time.Since(began))
	if kills == 0 {
		t.Errorf("no command was killed; the harness tested nothing")
	}

	// The next writers remove what killed writers left.
	e.run(t, "register", "final", "--mac", "52:54:00:ff:ff:ff")
	if out, err := pn(ctx, "add", "plat1", "--hostname", "final").CombinedOutput(); err != nil {
		t.Fatalf("add final: %v\n%s", err, out)
	}
	for _, dir := range []string{filepath.Join(e.state, "registrations"), filepath.Join(project, "platforms", "plat1"), filepath.Join(project, "platforms", "plat1", "nodes")} {
		ents, _ := os.ReadDir(dir)
		for _, ent := range ents {
			if strings.HasPrefix(ent.Name(), ".tmp-") {
				t.Errorf("%s outlived the next writer", filepath.Join(dir, ent.Name()))
			}
		}
	}
}

// checkCrashState compares the files with the model, adopting what it
// finds where the model does not know, and returns the number of
// temporary files it saw.
func checkCrashState(t *testing.T, ctx context.Context, i int, label string, e provisionerEnv, project string, pn func(context.Context, ...string) *exec.Cmd, m *crashModel) int {
	t.Helper()
	temps := 0
	regDir := filepath.Join(e.state, "registrations")
	ents, err := os.ReadDir(regDir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	onDisk := map[string]bool{}
	for _, ent := range ents {
		name := ent.Name()
		switch {
		case strings.HasPrefix(name, ".tmp-"):
			temps++
		case name == ".lock":
		case strings.HasSuffix(name, ".json"):
			stem := strings.TrimSuffix(name, ".json")
			data, err := os.ReadFile(filepath.Join(regDir, name))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := registry.DecodeRegistration(data, stem); err != nil {
				t.Errorf("registration %s does not parse: %v\n%s", name, err, data)
			}
			onDisk[stem] = true
		default:
			t.Errorf("unexpected file %s in the registrations folder", name)
		}
	}
	for name, v := range m.regs {
		switch {
		case v == unknown:
			m.regs[name] = map[bool]tri{true: present, false: absent}[onDisk[name]]
		case (v == present) != onDisk[name]:
			t.Errorf("registration %s is %v, want %v", name, map[bool]string{true: "on disk", false: "missing"}[onDisk[name]], v)
		}
	}
	for name := range onDisk {
		if _, ok := m.regs[name]; !ok {
			t.Errorf("registration %s on disk, but no command made it", name)
		}
	}

	nodesDir := filepath.Join(project, "platforms", "plat1", "nodes")
	for _, dir := range []string{filepath.Dir(nodesDir), nodesDir} {
		ents, _ := os.ReadDir(dir)
		for _, ent := range ents {
			if strings.HasPrefix(ent.Name(), ".tmp-") {
				temps++
			}
		}
	}
	all, err := allNodes(ctx, nodes.Open(project, nodes.Options{}))
	if err != nil {
		t.Errorf("the node files do not load: %v", err)
		return temps
	}
	seenHost, seenIP := map[string]bool{}, map[string]string{}
	for _, n := range all {
		if seenHost[n.Hostname] {
			t.Errorf("node %s appears twice", n.Hostname)
		}
		seenHost[n.Hostname] = true
		if ip := n.Network.PrivateIP; ip != "" {
			if other, ok := seenIP[ip]; ok {
				t.Errorf("nodes %s and %s share the private IP %s", other, n.Hostname, ip)
			}
			seenIP[ip] = n.Hostname
		}
		if _, ok := m.nodes[n.Hostname]; !ok {
			t.Errorf("node %s on disk, but no command made it", n.Hostname)
			continue
		}
		if m.nodes[n.Hostname] == absent {
			t.Errorf("node %s is on disk, want it missing", n.Hostname)
		}
		m.nodes[n.Hostname] = present
		for z, v := range m.zones[n.Hostname] {
			has := slices.Contains(n.Zones, z)
			switch {
			case v == unknown:
				m.zones[n.Hostname][z] = map[bool]tri{true: present, false: absent}[has]
			case (v == present) != has:
				t.Errorf("node %s zone %s: has %v, want %v (zones %v)", n.Hostname, z, has, v, n.Zones)
			}
		}
	}
	for h, v := range m.nodes {
		if seenHost[h] {
			continue
		}
		if v == present {
			t.Errorf("node %s is missing, want it on disk", h)
		}
		m.nodes[h] = absent
	}

	// The next commands run and list what is on disk.
	out, err := e.cmd(ctx, "list", "-o", "json").CombinedOutput()
	var list []listEntry
	if _, serr := os.Stat(e.state); errors.Is(serr, fs.ErrNotExist) {
		// A first command killed before it made the state folder: list
		// says the folder does not exist (exit 1) rather than "none".
		if err == nil || !strings.Contains(string(out), "does not exist") {
			t.Errorf("node-provisioner list -o json of a state folder never made: %v\n%s; want exit 1 saying it does not exist", err, out)
		}
	} else if err != nil || json.Unmarshal(out, &list) != nil {
		t.Errorf("node-provisioner list -o json: %v\n%s", err, out)
	}
	if len(list) != len(onDisk) {
		t.Errorf("node-provisioner list shows %d registrations, %d on disk:\n%s", len(list), len(onDisk), out)
	}
	out, err = pn(ctx, "list", "-o", "json").Output()
	var nl []map[string]any
	if err != nil || json.Unmarshal(out, &nl) != nil {
		t.Errorf("plasma-node list -o json: %v\n%s", err, out)
	}
	if len(nl) != len(all) {
		t.Errorf("plasma-node list shows %d nodes, %d on disk:\n%s", len(nl), len(all), out)
	}
	return temps
}

// TestCrashDuringConsumption SIGKILLs node-provisioner serve at a random
// point while it answers, 30 times (10 with -short), then starts it
// again and posts once more: across both runs the answer is served at
// most once, the registration ends pending or consumed (never both, never
// a claim file left behind once the next server has run), and a served
// answer's password is in the secret file.
func TestCrashDuringConsumption(t *testing.T) {
	t.Parallel() // its own folders; serve on a free loopback port
	iterations := 30
	if testing.Short() {
		iterations = 10
	}
	body, err := os.ReadFile("../answer/testdata/sysinfo/pve-9.2-synthetic.json")
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	type result struct {
		status int
		body   string
	}
	post := func(url string) result {
		resp, err := client.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			return result{}
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return result{}
		}
		return result{resp.StatusCode, string(b)}
	}
	outcomes := map[string]int{}
	for i := range iterations {
		e := newProvisionerEnv(t)
		e.run(t, "register", "pve7", "--mac", "52:54:00:ba:5e:11", "--boot-disk", "nvme0n1")

		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		c := e.cmd(ctx, "serve", "--http", "127.0.0.1:0", "--ttl", "1m", "--domain", "e2e.test")
		stdout, _ := c.StdoutPipe()
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		url := waitForURL(t, stdout)
		first := make(chan result, 1)
		go func() { first <- post(url) }()
		time.Sleep(time.Duration(rng.IntN(8_001)) * time.Microsecond)
		c.Process.Signal(syscall.SIGKILL)
		c.Wait()
		cancel()
		r1 := <-first

		url2, second := e.serve(t)
		r2 := post(url2)
		second.stop()
		served := 0
		for _, r := range []result{r1, r2} {
			if r.status == 200 {
				served++
			}
		}
		outcomes[fmt.Sprintf("first %d, second %d", r1.status, r2.status)]++
		if served > 1 {
			t.Fatalf("iteration %d: the answer was served twice", i)
		}
		if r2.status != 200 && r2.status != 404 {
			t.Errorf("iteration %d: second POST %d %s", i, r2.status, r2.body)
		}
		// The second server has run Consume or refused: the folder is
		// settled.
		regDir := filepath.Join(e.state, "registrations")
		ents, _ := os.ReadDir(regDir)
		var files []string
		for _, ent := range ents {
			name := ent.Name()
			if name == ".lock" {
				continue
			}
			files = append(files, name)
			data, err := os.ReadFile(filepath.Join(regDir, name))
			if err != nil {
				t.Fatal(err)
			}
			stem, _, _ := strings.Cut(name, ".")
			if _, err := registry.DecodeRegistration(data, stem); err != nil {
				t.Errorf("iteration %d: %s does not parse: %v", i, name, err)
			}
		}
		if len(files) != 1 || (files[0] != "pve7.json" && files[0] != "pve7.json.consumed") {
			t.Errorf("iteration %d: registration files %v, want pve7.json or pve7.json.consumed", i, files)
		}
		if served == 1 && (len(files) != 1 || files[0] != "pve7.json.consumed") {
			t.Errorf("iteration %d: an answer was served but the registration is %v", i, files)
		}
		for _, r := range []result{r1, r2} {
			if r.status != 200 {
				continue
			}
			a, err := answer.Decode([]byte(r.body), answer.Version92)
			if err != nil {
				t.Fatalf("iteration %d: answer: %v", i, err)
			}
			pw, err := os.ReadFile(filepath.Join(e.secrets, "pve7.pw"))
			if err != nil || !answer.CheckPassword(a.Global.RootPasswordHashed, strings.TrimSpace(string(pw))) {
				t.Errorf("iteration %d: the served answer's password is not in the secret file: %v", i, err)
			}
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	t.Logf("%d iterations: %v", iterations, outcomes)
}

// allNodes loads the nodes of every platform of s, sorted by platform, then
// hostname.
func allNodes(ctx context.Context, s *nodes.Store) ([]*nodes.Node, error) {
	plats, err := s.Platforms(ctx)
	if err != nil {
		return nil, err
	}
	var out []*nodes.Node
	for _, p := range plats {
		ns, err := s.Nodes(ctx, p)
		if err != nil {
			return nil, err
		}
		out = append(out, ns...)
	}
	return out, nil
}
