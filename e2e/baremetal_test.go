package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestBareMetalProvision provisions a pxe platform with plasma-node,
// checks node-provisioner sees the registrations, lets an installer
// consume one and checks plasma-node list shows it consumed.
func TestBareMetalProvision(t *testing.T) {
	proj, state, home := t.TempDir(), t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519.pub"),
		[]byte("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGzx6HqSm1mQ3VcLaZ3r0ZKtgtF5wVbUEjS0Xv5R5N5g op@e2e\n"), 0o644)
	hw := filepath.Join(proj, "hardware.yaml")
	os.WriteFile(hw, []byte(`machines:
  - macs: ["52:54:00:ba:5e:11"]    # the synthetic 9.2 installer's NIC
    boot_disk: nvme0n1
  - macs: ["52:54:00:ba:5e:12"]
    boot_disk: sda
  - serial: CZ2D1A0BC3
`), 0o644)
	env := append(os.Environ(), "HOME="+home, "NODE_PROVISIONER_STATE_DIR=", "PLASMA_NODE_DIR=")
	pn := func(args ...string) (int, string, string) {
		t.Helper()
		c := exec.Command(filepath.Join(bin, "plasma-node"), append([]string{"--dir", proj}, args...)...)
		c.Env = env
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		err := c.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errb.String()
	}
	must := func(args ...string) string {
		t.Helper()
		code, out, errs := pn(args...)
		if code != 0 {
			t.Fatalf("plasma-node %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
		}
		return out
	}
	nodeFiles := func() []string {
		m, _ := filepath.Glob(filepath.Join(proj, "platforms", "metal", "nodes", "*.yaml"))
		for i := range m {
			m[i] = filepath.Base(m[i])
		}
		return m
	}
	provision := func(count string) (int, string, string) {
		return pn("provision", "metal", "-z", "foundation.cluster.control:pve:"+count, "--hardware", hw, "--provisioner-dir", state, "--auto-approve")
	}

	must("add", "metal", "--provider", "pxe", "--domain", "lab.example")
	if code, out, errs := provision("2"); code != 0 || !strings.Contains(out, "Plan: 0 to import, 2 to create") {
		t.Fatalf("provision 2: %d\n%s%s", code, out, errs)
	}
	if diff := cmp.Diff([]string{"metal-control-001.yaml", "metal-control-002.yaml"}, nodeFiles()); diff != "" {
		t.Errorf("node files (-want +got):\n%s", diff)
	}
	if code, out, _ := provision("2"); code != 0 || !strings.Contains(out, "No changes.") {
		t.Errorf("provision 2 again: %d\n%s", code, out)
	}
	if code, out, errs := provision("3"); code != 0 || !strings.Contains(out, "metal-control-003 (serial CZ2D1A0BC3;") {
		t.Errorf("provision 3: %d\n%s%s", code, out, errs)
	}
	code, _, errs := provision("2")
	if code == 0 || !strings.Contains(errs, "node-provisioner_registration.metal-control-003 (action: delete)") || len(nodeFiles()) != 3 {
		t.Errorf("provision 2 after 3: exit %d, %d node files\n%s", code, len(nodeFiles()), errs)
	}
	if code, _, errs := pn("provision", "metal", "-z", "foundation.cluster.control:pve:5", "--hardware", hw, "--provisioner-dir", state, "--auto-approve"); code != 2 || !strings.Contains(errs, "pool control needs 2 more machine(s)") {
		t.Errorf("provision 5 with 3 machines: exit %d\n%s", code, errs)
	}

	np := func(ctx context.Context, args ...string) *exec.Cmd {
		c := exec.CommandContext(ctx, filepath.Join(bin, "node-provisioner"), append([]string{"--state-dir", state, "--secrets-dir", filepath.Join(state, "secrets")}, args...)...)
		c.Env = env
		return c
	}
	out, err := np(context.Background(), "list", "-o", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var regs []struct {
		Name, State string
		MACs        []string
	}
	json.Unmarshal(out, &regs)
	var got []string
	for _, r := range regs {
		got = append(got, r.Name+" "+r.State+" "+strings.Join(r.MACs, ","))
	}
	want := []string{"metal-control-001 pending 52:54:00:ba:5e:11", "metal-control-002 pending 52:54:00:ba:5e:12", "metal-control-003 pending "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("node-provisioner list (-want +got):\n%s\n%s", diff, out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	serve := np(ctx, "serve", "--http", "127.0.0.1:0", "--ttl", "1m", "--domain", "lab.example")
	url, _ := startServe(t, serve)
	body, _ := os.ReadFile("../answer/testdata/sysinfo/pve-9.2-synthetic.json")
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("POST /answer: %s", resp.Status)
	}

	var listed []map[string]any
	if err := json.Unmarshal([]byte(must("list", "metal", "-o", "json", "--provisioner-dir", state)), &listed); err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, n := range listed {
		net, _ := n["network"].(map[string]any)
		got = append(got, fmt.Sprint(n["hostname"], " ", n["install_state"], " ", net["private_ip"], " ", net["private_mac"]))
	}
	want = []string{"metal-control-001 consumed 192.168.0.1 52:54:00:ba:5e:11", "metal-control-002 pending 192.168.0.2 52:54:00:ba:5e:12", "metal-control-003 pending 192.168.0.3 <nil>"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("plasma-node list -o json (-want +got):\n%s", diff)
	}
	table := must("list", "--provisioner-dir", state)
	if !strings.Contains(table, "INSTALL") || !strings.Contains(table, "consumed") {
		t.Errorf("plasma-node list:\n%s", table)
	}
	if out := must("destroy", "metal", "--force", "--provisioner-dir", state); !strings.Contains(out, "Removed node metal-control-003@metal") {
		t.Errorf("destroy:\n%s", out)
	}
	out, _ = np(context.Background(), "list").Output()
	if !strings.Contains(string(out), "metal-control-001  consumed") || strings.Contains(string(out), "metal-control-002") {
		t.Errorf("after destroy, node-provisioner list:\n%s", out)
	}
}
