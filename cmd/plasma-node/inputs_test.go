package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/internal/badinput"
)

// The bad values of each input, one table per input, which every entry
// point below is run against: an entry point added later joins the
// list, so that it cannot forget the input's rule.
var (
	badCIDRs = map[string]string{
		"host bits set":           "10.0.0.1/8",
		"IPv6 host bits set":      "fd00::1/64",
		"an address, no length":   "10.0.0.0",
		"an octet over 255":       "999.0.0.0/8",
		"an IPv4-mapped prefix":   "::ffff:10.0.0.0/120",
		"a name":                  "lan.example/24",
		"a prefix length over 32": "10.0.0.0/33",
	}
	badAddrs = map[string]string{
		"an octet over 255":   "999.0.0.1",
		"three octets":        "10.0.1",
		"a host name":         "node.example.com",
		"a zone":              "fe80::1%eth0",
		"a CIDR, not an addr": "10.0.0.1/24",
	}
)

// badDomains is the shared table of bad domains (internal/badinput),
// which node-provisioner's site domain is run against too.
func badDomains() map[string]string {
	m := map[string]string{}
	for _, v := range badinput.Domains() {
		m[v.Name] = v.Value
	}
	return m
}

// inputEntry is one way a value reaches plasma-node: it runs the
// command in dir with value and returns its result, and what the result
// must name.
type inputEntry struct {
	run   func(t *testing.T, dir, value string) result
	names string
	code  int // the exit code: 2 for bad input, 1 for validate's finding
}

// platformWith writes platform p1 (manual) with extra YAML under its
// name and infrastructure, and returns the project folder.
func platformWith(t *testing.T, extra string) string {
	t.Helper()
	dir := t.TempDir()
	nodesDir := filepath.Join(dir, "platforms", "p1", "nodes")
	if err := os.MkdirAll(nodesDir, 0o755); err != nil {
		t.Fatal(err)
	}
	data := "name: p1\ninfrastructure:\n  metal_provider: manual\n" + extra
	if err := os.WriteFile(filepath.Join(dir, "platforms", "p1", "platform.yaml"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runInputTable runs every entry point against every bad value: each
// must fail with its exit code, name the input, write nothing and print
// no warning before the error.
func runInputTable(t *testing.T, values map[string]string, entries map[string]inputEntry) {
	for ename, e := range entries {
		for vname, v := range values {
			t.Run(ename+"/"+vname, func(t *testing.T) {
				dir := t.TempDir()
				r := e.run(t, dir, v)
				if r.code != e.code {
					t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, e.code, r.stdout, r.err)
				}
				all := r.stdout + r.err
				if !strings.Contains(all, e.names) || !strings.Contains(all, "want") {
					t.Errorf("output does not name %q and say what would be valid:\n%s", e.names, all)
				}
				if strings.Contains(r.err, "warning") {
					t.Errorf("a warning was printed for bad input:\n%s", r.err)
				}
			})
		}
	}
}

func TestDomainRuleAtEveryEntryPoint(t *testing.T) {
	runInputTable(t, badDomains(), map[string]inputEntry{
		"add --domain": {run: func(t *testing.T, dir, v string) result {
			r := plasma(t, dir, "add", "p1", "--domain", v)
			if _, err := os.Stat(filepath.Join(dir, "platforms")); err == nil {
				t.Errorf("add --domain %q wrote platforms/", v)
			}
			return r
		}, names: "--domain", code: 2},
		"platform.yaml dns.domain, add --hostname": {run: func(t *testing.T, _, v string) result {
			dir := platformWith(t, "dns:\n  domain: "+strconv.Quote(v)+"\n")
			r := plasma(t, dir, "add", "p1", "--hostname", "n1")
			if _, err := os.Stat(filepath.Join(dir, "platforms", "p1", "nodes", "n1.yaml")); err == nil {
				t.Errorf("add --hostname wrote a node on a platform with domain %q", v)
			}
			return r
		}, names: "dns.domain", code: 2},
		"platform.yaml dns.domain, validate": {run: func(t *testing.T, _, v string) result {
			return plasma(t, platformWith(t, "dns:\n  domain: "+strconv.Quote(v)+"\n"), "validate")
		}, names: "dns.domain", code: 1},
		"platform.yaml dns.domain, validate PLATFORM -o json": {run: func(t *testing.T, _, v string) result {
			return plasma(t, platformWith(t, "dns:\n  domain: "+strconv.Quote(v)+"\n"), "validate", "p1", "-o", "json")
		}, names: "dns.domain", code: 1},
	})
}

func TestCIDRRuleAtEveryEntryPoint(t *testing.T) {
	pool := func(v string) string {
		return "networking:\n  ip_pools:\n    lan:\n      cidr: " + strconv.Quote(v) + "\n"
	}
	runInputTable(t, badCIDRs, map[string]inputEntry{
		"add --private-network": {run: func(t *testing.T, dir, v string) result {
			r := plasma(t, dir, "add", "p1", "--private-network", v)
			if _, err := os.Stat(filepath.Join(dir, "platforms")); err == nil {
				t.Errorf("add --private-network %q wrote platforms/", v)
			}
			return r
		}, names: "--private-network", code: 2},
		"platform.yaml networking.private_network, add --hostname": {run: func(t *testing.T, _, v string) result {
			return plasma(t, platformWith(t, "networking:\n  private_network: "+strconv.Quote(v)+"\n"), "add", "p1", "--hostname", "n1")
		}, names: "networking.private_network", code: 2},
		"platform.yaml networking.private_network, validate": {run: func(t *testing.T, _, v string) result {
			return plasma(t, platformWith(t, "networking:\n  private_network: "+strconv.Quote(v)+"\n"), "validate")
		}, names: "networking.private_network", code: 1},
		"platform.yaml networking.ip_pools, add --hostname --ip-pool": {run: func(t *testing.T, _, v string) result {
			return plasma(t, platformWith(t, pool(v)), "add", "p1", "--hostname", "n1", "--ip-pool", "lan")
		}, names: "networking.ip_pools.lan", code: 2},
		"platform.yaml networking.ip_pools, validate": {run: func(t *testing.T, _, v string) result {
			return plasma(t, platformWith(t, pool(v)), "validate")
		}, names: "networking.ip_pools.lan", code: 1},
	})
}

func TestAddressRuleAtEveryEntryPoint(t *testing.T) {
	node := func(t *testing.T, field, v string) string {
		dir := platformWith(t, "")
		addrs := map[string]string{"public_ip": "51.159.0.1", "private_ip": "192.168.0.1", field: v}
		data := fmt.Sprintf("hostname: n1\nnetwork:\n  public_ip: %s\n  private_ip: %s\n", strconv.Quote(addrs["public_ip"]), strconv.Quote(addrs["private_ip"]))
		if err := os.WriteFile(filepath.Join(dir, "platforms", "p1", "nodes", "n1.yaml"), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	runInputTable(t, badAddrs, map[string]inputEntry{
		"add --public-ip": {run: func(t *testing.T, _, v string) result {
			return plasma(t, platformWith(t, ""), "add", "p1", "--hostname", "n1", "--public-ip", v)
		}, names: "--public-ip", code: 2},
		"add --private-ip": {run: func(t *testing.T, _, v string) result {
			return plasma(t, platformWith(t, ""), "add", "p1", "--hostname", "n1", "--private-ip", v)
		}, names: "--private-ip", code: 2},
		"node file public_ip, validate": {run: func(t *testing.T, _, v string) result {
			return plasma(t, node(t, "public_ip", v), "validate")
		}, names: "public_ip", code: 1},
		"node file private_ip, validate": {run: func(t *testing.T, _, v string) result {
			return plasma(t, node(t, "private_ip", v), "validate")
		}, names: "private_ip", code: 1},
		"platform.yaml ip pool gateway, validate": {run: func(t *testing.T, _, v string) result {
			return plasma(t, platformWith(t, "networking:\n  ip_pools:\n    lan:\n      cidr: 10.0.0.0/24\n      gateway: "+strconv.Quote(v)+"\n"), "validate")
		}, names: "gateway", code: 1},
	})
}

func TestProvisionerURLRuleAtEveryEntryPoint(t *testing.T) {
	bad := map[string]string{
		"an octet over 255": "https://999.0.0.1:8091",
		"a port over 65535": "https://prov.example:99999",
		"port 0":            "https://10.0.0.1:0",
		"plain http":        "http://prov.example:8091",
		"a user in the URL": "https://admin@prov.example:8091",
	}
	pxe := func(t *testing.T, v string) string {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "platforms", "p1", "nodes"), 0o755); err != nil {
			t.Fatal(err)
		}
		data := "name: p1\ninfrastructure:\n  metal_provider: pxe\n  provisioner_url: " + strconv.Quote(v) + "\n"
		if err := os.WriteFile(filepath.Join(dir, "platforms", "p1", "platform.yaml"), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	runInputTable(t, bad, map[string]inputEntry{
		"platform.yaml provisioner_url, validate": {run: func(t *testing.T, _, v string) result {
			return plasma(t, pxe(t, v), "validate")
		}, names: "infrastructure.provisioner_url", code: 1},
		"platform.yaml provisioner_url, provision --dry-run": {run: func(t *testing.T, _, v string) result {
			t.Setenv("NODE_PROVISIONER_TOKEN", "example-token")
			return plasma(t, pxe(t, v), "provision", "p1", "-z", "foundation.cluster.control:any:1", "--dry-run")
		}, names: "infrastructure.provisioner_url", code: 2},
	})
}

func TestHostnameRuleAtEveryEntryPoint(t *testing.T) {
	bad := map[string]string{
		"a space":            "my node",
		"an underscore":      "pve_1",
		"upper case":         "Node1",
		"a leading '-'":      "-node",
		"digits only":        "1234",
		"64 characters":      strings.Repeat("a", 64),
		"a dot":              "node.example",
		"a non-ASCII letter": "nöde",
	}
	runInputTable(t, bad, map[string]inputEntry{
		"add --hostname": {run: func(t *testing.T, _, v string) result {
			return plasma(t, platformWith(t, ""), "add", "p1", "--hostname", v)
		}, names: "hostname", code: 2},
		"add PLATFORM": {run: func(t *testing.T, dir, v string) result {
			return plasma(t, dir, "add", "--", v)
		}, names: "platform", code: 2},
		"join --hostname": {run: func(t *testing.T, _, v string) result {
			return plasma(t, platformWith(t, ""), "join", "p1", "--server-id", "x1", "--pool", "p", "--hostname", v)
		}, names: "hostname", code: 2},
		"node file hostname, validate": {run: func(t *testing.T, _, v string) result {
			dir := platformWith(t, "")
			data := "hostname: " + strconv.Quote(v) + "\nnetwork:\n  public_ip: 51.159.0.1\n  private_ip: 192.168.0.1\n"
			if err := os.WriteFile(filepath.Join(dir, "platforms", "p1", "nodes", "n1.yaml"), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			return plasma(t, dir, "validate")
		}, names: "hostname", code: 1},
	})
}
