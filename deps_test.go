package plasmanode_test

import (
	"path/filepath"
	"testing"
)

const mod = "github.com/plasmactl/plasma-node"

// The servers of a node-provisioner window and their stacks.
var (
	servers = []string{mod + "/pxe", mod + "/pxe/api", mod + "/pxe/daemon", mod + "/pxe/power", mod + "/pxe/netboot",
		mod + "/pxe/proxydhcp", mod + "/pxe/dhcpserver", mod + "/pxe/tftp", mod + "/pxe/bootassets"}
	fileStores = []string{mod + "/pxe/store/folder"}
)

// each maps every path in paths to reason, for DepChecker.BadDeps.
func each(reason string, paths ...string) map[string]string {
	m := make(map[string]string, len(paths))
	for _, p := range paths {
		m[p] = reason
	}
	return m
}

// join merges BadDeps maps.
func join(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// serverStacks are the DHCP, TFTP and IPMI stacks only a window or the IPMI
// driver links.
var serverStacks = join(
	each("the window's DHCP stack", "github.com/insomniacslk/dhcp/..."),
	each("the window's TFTP stack", "github.com/pin/tftp/..."),
	each("the IPMI driver, linked by pxe/bmc/ipmi alone", "github.com/bougou/go-ipmi/..."),
)

// TestDeps reads the import graph (go list -deps) of each rule's packages.
func TestDeps(t *testing.T) {
	rules := map[string]DepChecker{
		// The CLI framework stays out of the packages other programs embed.
		"libraries link no CLI package": {
			Pkgs:    []string{".", "./nodes", "./zones", "./ipam", "./answer", "./pxe"},
			BadDeps: join(each("the CLI framework", "github.com/spf13/"), each("the CLI's commands", mod+"/internal/cli")),
		},
		// The SDK, the registry, the window and the pxe provider store and
		// check BMC endpoints without linking the IPMI stack.
		"only the IPMI driver links go-ipmi": {
			Pkgs:    []string{".", "./pxe/registry", "./pxe", "./pxe/bmc", "./providers/pxe", "./cmd/plasma-node"},
			BadDeps: each("the IPMI driver, linked by pxe/bmc/ipmi alone", "github.com/bougou/go-ipmi/..."),
		},
		// The programs that only speak to a node-provisioner read the window
		// record (pxe/window) and the API's wire types (pxe/apitype).
		"clients link no server": {
			Pkgs:    []string{"./pxe/client", "./providers/pxe", "./cmd/plasma-node"},
			BadDeps: join(serverStacks, each("a node-provisioner server", servers...)),
		},
		"answer links no other package of the module": {
			Pkgs:    []string{"./answer"},
			BadDeps: each("answer is the installer's format only", mod+"/"),
			Allow:   []string{mod + "/answer/..."},
		},
		// examples/embed-pxe serves a window, so it links DHCP and TFTP; it
		// is held to the IPMI and PostgreSQL rules only.
		"the SDK, plasma-node and the clients link no DHCP, TFTP or IPMI stack": {
			Pkgs:    []string{".", "./cmd/plasma-node", "./providers/...", "./pxe/client"},
			BadDeps: serverStacks,
		},
		"the embedded window links no IPMI driver": {
			Pkgs:    []string{"./examples/embed-pxe"},
			BadDeps: each("the IPMI driver, linked by pxe/bmc/ipmi alone", "github.com/bougou/go-ipmi/..."),
		},
		// PostgreSQL registers its opener itself; only the daemon and
		// node-provisioner import it. To let a rule report without failing
		// while an issue is open, set Known: "issue N: why".
		"the SDK, plasma-node, the clients and the embedded window link no PostgreSQL driver": {
			Pkgs:    []string{".", "./cmd/plasma-node", "./examples/embed-pxe", "./providers/...", "./pxe/client"},
			BadDeps: each("the PostgreSQL driver, linked only where a store may be postgres://", "github.com/jackc/"),
		},
		// The window only serves: it asks the backend it is given and
		// opens no store (the wiring builds node-provisioner's backend).
		"the window opens no store": {
			Pkgs: []string{"./pxe"},
			BadDeps: join(each("the stores: the wiring opens them and builds the backend", mod+"/pxe/store/...", mod+"/pxe/registry/...", mod+"/pxe/backend/regbackend"),
				each("the PostgreSQL driver, linked only where a store may be postgres://", "github.com/jackc/")),
		},
		// The window's backend, the API, power, the daemon, the pxe provider
		// and both binaries take the store interfaces: none imports a file
		// store, the window's record and the idempotency records included.
		// pxe/store opens them.
		"servers import no file store": {
			Pkgs:    append([]string{"./pxe/registry", "./pxe/backend/regbackend", "./pxe/api", "./pxe/power", "./pxe/daemon", "./providers/pxe"}, binaries(t)...),
			Direct:  true,
			BadDeps: each("a file store: take its interface, pxe/store opens it", fileStores...),
		},
	}
	for name, c := range rules {
		t.Run(name, func(t *testing.T) { c.Check(t) })
	}
}

// binaries lists the packages under cmd/.
func binaries(t *testing.T) []string {
	t.Helper()
	cmds, err := filepath.Glob("cmd/*")
	if err != nil || len(cmds) < 2 {
		t.Fatalf("the binaries under cmd/: %v %v", cmds, err)
	}
	for i, c := range cmds {
		cmds[i] = "./" + c
	}
	return cmds
}
