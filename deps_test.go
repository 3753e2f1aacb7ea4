package plasmanode_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLibrariesDoNotPullCLIPackages keeps the CLI framework out of the
// packages other programs embed.
func TestLibrariesDoNotPullCLIPackages(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("PLASMA_E2E") == "1" {
			t.Fatal("needs the go command")
		}
		t.Skip("needs the go command")
	}
	libs := []string{".", "./nodes", "./zones", "./ipam", "./answer", "./pxe"}
	out, err := exec.Command("go", append([]string{"list", "-deps", "-f", "{{.ImportPath}}"}, libs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/spf13/") || strings.HasSuffix(dep, "/internal/cli") {
			t.Errorf("a library package depends on %s", dep)
		}
	}
}

// TestOnlyTheIPMIDriverLinksGoIPMI keeps the IPMI stack in pxe/bmc/ipmi:
// the SDK, the registry, the window and the pxe provider store and check
// BMC endpoints without linking it.
func TestOnlyTheIPMIDriverLinksGoIPMI(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("PLASMA_E2E") == "1" {
			t.Fatal("needs the go command")
		}
		t.Skip("needs the go command")
	}
	libs := []string{".", "./pxe/registry", "./pxe", "./pxe/bmc", "./providers/pxe", "./cmd/plasma-node"}
	out, err := exec.Command("go", append([]string{"list", "-deps", "-f", "{{.ImportPath}}"}, libs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/bougou/go-ipmi") {
			t.Errorf("one of %v depends on %s", libs, dep)
		}
	}
}

// TestClientsLinkNoServer keeps the programs that only speak to a
// node-provisioner (the API client, the pxe provider, plasma-node) free of
// the window's servers and their DHCP and TFTP stacks: they read the
// window record (pxe/window) and the API's wire types (pxe/apitype).
func TestClientsLinkNoServer(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("PLASMA_E2E") == "1" {
			t.Fatal("needs the go command")
		}
		t.Skip("needs the go command")
	}
	const mod = "github.com/plasmactl/plasma-node/"
	servers := []string{mod + "pxe", mod + "pxe/api", mod + "pxe/daemon", mod + "pxe/power", mod + "pxe/netboot",
		mod + "pxe/proxydhcp", mod + "pxe/dhcpserver", mod + "pxe/tftp", mod + "pxe/bootassets"}
	for _, client := range []string{"./pxe/client", "./providers/pxe", "./cmd/plasma-node"} {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", client).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", client, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "github.com/insomniacslk/dhcp") || strings.HasPrefix(dep, "github.com/pin/tftp") || slices.Contains(servers, dep) {
				t.Errorf("%s depends on %s", client, dep)
			}
		}
	}
}

// TestServersTakeStoreInterfaces keeps the window's backend (package
// pxe/registry), the API, power, the daemon, the pxe provider and
// both binaries (cmd/*) on the store interfaces: none of them imports a
// file-store package (the registrations', the event log's, the tokens',
// the secrets', the discovery inbox's), nor opens the registrations', the secrets' or the
// window's folder itself. pxe/store opens them.
func TestServersTakeStoreInterfaces(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("PLASMA_E2E") == "1" {
			t.Fatal("needs the go command")
		}
		t.Skip("needs the go command")
	}
	const mod = "github.com/plasmactl/plasma-node/"
	fileStores := []string{mod + "pxe/registry/regfile", mod + "pxe/registry/installfile", mod + "pxe/events/eventfile", mod + "pxe/apitoken/tokenfile", mod + "pxe/secret/secretfile", mod + "pxe/discovery/discoveryfile"}
	openers := []string{"regfile.", "installfile.", "secretfile.", "tokenfile.", "eventfile.", "discoveryfile.", "window.Dir("}
	pkgs := []string{"./pxe/registry", "./pxe/backend/regbackend", "./pxe/api", "./pxe/power", "./pxe/daemon", "./providers/pxe"}
	cmds, err := filepath.Glob("cmd/*")
	if err != nil || len(cmds) < 2 {
		t.Fatalf("the binaries under cmd/: %v %v", cmds, err)
	}
	for _, c := range cmds {
		pkgs = append(pkgs, "./"+c)
	}
	for _, pkg := range pkgs {
		out, err := exec.Command("go", "list", "-f", "{{.Dir}}\n{{join .GoFiles \" \"}}\n{{join .Imports \" \"}}", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		lines := strings.SplitN(string(out), "\n", 3)
		if len(lines) < 3 {
			t.Fatalf("go list %s: %q", pkg, out)
		}
		for _, imp := range strings.Fields(lines[2]) {
			if slices.Contains(fileStores, imp) {
				t.Errorf("%s imports the file store %s; want its interface", pkg, imp)
			}
		}
		for _, f := range strings.Fields(lines[1]) {
			src, err := os.ReadFile(filepath.Join(lines[0], f))
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range openers {
				if strings.Contains(string(src), o) {
					t.Errorf("%s/%s names %s: a store is opened by pxe/store, the package takes its interface", pkg, f, o)
				}
			}
		}
	}
}
