package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateAndListAreTotal: a broken node file or platform.yaml is a
// row with why, not the end of the run; validate exits 1 for it.
func TestValidateAndListAreTotal(t *testing.T) {
	dir := setup(t)
	mustRun(t, dir, "add", "other", "--domain", "example.org")
	write := func(rel, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("platforms/demo/nodes/n9.yaml", "hostname: n9\nnetwork: [\n")

	r := plasma(t, dir, "validate")
	if r.code != 1 || !strings.Contains(r.stdout, "n9") || !strings.Contains(r.stdout, "BROKEN") || !strings.Contains(r.stdout, "n9.yaml") {
		t.Errorf("validate with a broken node file: exit %d, want 1 and a BROKEN row\n%s%s", r.code, r.stdout, r.err)
	}
	r = plasma(t, dir, "validate", "demo", "-o", "json")
	var v struct {
		Nodes []struct {
			Hostname string `json:"hostname"`
			Broken   bool   `json:"broken"`
			Valid    bool   `json:"valid"`
		} `json:"nodes"`
		HasErrors bool `json:"has_errors"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || r.code != 1 || !v.HasErrors {
		t.Fatalf("validate -o json: exit %d, %v\n%s%s", r.code, err, r.stdout, r.err)
	}
	if n := v.Nodes[0]; n.Hostname != "n9" || !n.Broken || n.Valid {
		t.Errorf("validate -o json: the broken file's row is %+v, want n9's first", n)
	}

	r = plasma(t, dir, "show", "n9")
	if r.code == 0 || strings.Contains(r.err, "neither a platform nor a node") || !strings.Contains(r.err, "platforms/demo/nodes/n9.yaml cannot be read") {
		t.Errorf("show n9 of a broken file: exit %d, stderr %q; want it to say the file is broken and why", r.code, r.err)
	}

	// A broken platform.yaml is a row of list over all platforms.
	write("platforms/other/platform.yaml", "name: other\ninfrastructure: [\n")
	r = plasma(t, dir, "list")
	if r.code != 1 || !strings.Contains(r.stdout, "node001") || !strings.Contains(r.stdout, "other     (platform.yaml)") || !strings.Contains(r.stdout, "BROKEN") {
		t.Errorf("list with a broken platform.yaml: exit %d, want 1 with the other platforms' nodes and a BROKEN row\n%s%s", r.code, r.stdout, r.err)
	}
	r = plasma(t, dir, "validate")
	if r.code != 1 || !strings.Contains(r.stdout, "platform other (platforms/other/platform.yaml): BROKEN") {
		t.Errorf("validate with a broken platform.yaml: exit %d\n%s%s", r.code, r.stdout, r.err)
	}
}

// TestValidateReportsAHostnameThatIsNotItsFileName: the node is found by
// its file's name, so a different hostname: is reported.
func TestValidateReportsAHostnameThatIsNotItsFileName(t *testing.T) {
	dir := setup(t)
	f := filepath.Join(dir, "platforms/demo/nodes/node002.yaml")
	b, _ := os.ReadFile(f)
	os.WriteFile(f, []byte(strings.Replace(string(b), "hostname: node002", "hostname: node007", 1)), 0o644)
	r := plasma(t, dir, "validate")
	if !strings.Contains(r.stdout, `hostname: hostname "node007" differs from its file's name node002.yaml`) {
		t.Errorf("validate of a renamed node: exit %d\n%s%s", r.code, r.stdout, r.err)
	}
}

// TestListOfAFolderThatIsNoProject: --dir /etc has no platforms/: list
// says so and exits 1, rather than "No nodes.".
func TestListOfAFolderThatIsNoProject(t *testing.T) {
	dir := t.TempDir()
	r := plasma(t, dir, "list")
	if r.code != 1 || strings.Contains(r.stdout, "No nodes.") || !strings.Contains(r.err, filepath.Join(dir, "platforms")) || !strings.Contains(r.err, "not a project folder") || !strings.Contains(r.err, "plasma-node add NAME") {
		t.Errorf("list of a folder without platforms/: exit %d\n%s%s", r.code, r.stdout, r.err)
	}
}

// TestOutOfPoolWarningReadsPlainly: the warning names the pool and its
// network as values, not an escaped internal string, on a line of its
// own before the result.
func TestOutOfPoolWarningReadsPlainly(t *testing.T) {
	dir := setup(t)
	r := plasma(t, dir, "add", "demo", "--hostname", "node009", "--private-ip", "10.0.0.5")
	want := "plasma-node: warning: private IP is outside the platform's pool (node=node009, ip=10.0.0.5, pool=networking.private_network, network=192.168.0.0/16)\n"
	if r.code != 0 || r.err != want {
		t.Errorf("add outside the pool: exit %d, stderr %q; want %q", r.code, r.err, want)
	}
}

// TestDeallocateOfAZoneNotHeldSaysSoOnce: the refusal names the zone
// and the node's zones once, and hints --recursive only where it would
// help (a zone above the node's).
func TestDeallocateOfAZoneNotHeldSaysSoOnce(t *testing.T) {
	dir := setup(t)
	r := plasma(t, dir, "deallocate", "node001", "platform.cognition.data")
	want := `plasma-node: node node001@demo: zone "platform.cognition.data" is not allocated to the node (it has platform.foundation.cluster.control)` + "\n"
	if r.code != 2 || r.err != want {
		t.Errorf("deallocate of a zone not held: exit %d, stderr %q; want 2 and %q", r.code, r.err, want)
	}
	r = plasma(t, dir, "deallocate", "node001", "platform.foundation")
	if r.code != 2 || strings.Count(r.err, "not allocated") != 1 || !strings.HasSuffix(r.err, "; --recursive removes the zones below it too\n") {
		t.Errorf("deallocate of a zone above: exit %d, stderr %q", r.code, r.err)
	}
}

// TestAWSImageIsNamedEarly: add --provider aws says the image must be
// set, validate warns of it, and a dry run that would create a server
// without one is bad input (exit 2) naming the setting.
func TestAWSImageIsNamedEarly(t *testing.T) {
	dir := t.TempDir()
	out := mustRun(t, dir, "add", "cloud", "--provider", "aws")
	if !strings.Contains(out, "Before provisioning, set infrastructure.image there: an AMI id") {
		t.Errorf("add --provider aws does not mention the image:\n%s", out)
	}
	r := plasma(t, dir, "validate")
	if r.code != 0 || !strings.Contains(r.stdout, "infrastructure.image is not set") {
		t.Errorf("validate of an aws platform without an image: exit %d\n%s%s", r.code, r.stdout, r.err)
	}
	t.Setenv("AWS_REGION", "eu-west-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "example")
	r = plasma(t, dir, "provision", "cloud", "-z", "foundation.cluster.control:t3.small:1", "--dry-run")
	if r.code != 2 || !strings.Contains(r.err, `infrastructure.image "": invalid setting: want an AMI id`) {
		t.Errorf("aws dry run without an image: exit %d, stderr %q; want 2 naming infrastructure.image", r.code, r.err)
	}
}

// TestBadInputBeforeAnyWarning: add with a zone new to the platform
// (a warning) and a taken address (bad input) fails with the error
// alone, exit 2.
func TestBadInputBeforeAnyWarning(t *testing.T) {
	dir := setup(t)
	r := plasma(t, dir, "add", "demo", "--hostname", "node009", "--public-ip", "51.159.0.1", "-z", "platform.interaction.web")
	if r.code != 2 || strings.Contains(r.err, "warning") || strings.Count(r.err, "\n") != 1 || !strings.Contains(r.err, "--public-ip: 51.159.0.1 is already used by node node001") {
		t.Errorf("add with a new zone and a taken address: exit %d, stderr %q; want 2 and the error alone", r.code, r.err)
	}
}

// TestAllocateRefusalPrintsNoWarning: a replace of a zone the node does
// not hold, to a zone new to the platform, fails with its error alone.
func TestAllocateRefusalPrintsNoWarning(t *testing.T) {
	dir := setup(t)
	r := plasma(t, dir, "allocate", "node001", "platform.nope/platform.interaction.web")
	if r.code != 2 || strings.Contains(r.err, "warning") {
		t.Errorf("allocate of a refused replace: exit %d, stderr %q; want 2 and no warning", r.code, r.err)
	}
}
