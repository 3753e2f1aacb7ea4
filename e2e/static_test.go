package e2e

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestStaticAddressing: plasma-node provisions a pxe platform whose
// install network is an ip pool of the lab's subnet (addresses from .200,
// gateway and DNS the server); the machine gets a lease from the site's
// DHCP server (.100-.150), asks for its answer, and the answer is
// from-answer with the node file's private_ip, the pool's gateway and DNS
// and a filter on the machine's MAC. The installer emulator matches the
// filter against its NIC, brings that address up in place of the lease
// and reports it in its webhook; node-provisioner list -o json shows it,
// and plasma-node refresh reports it with no installed_ip of its own in
// the node file: node file, answer and machine agree.
func TestStaticAddressing(t *testing.T) {
	t.Parallel()
	media := netbootPrereqs(t)
	const mac = "52:54:00:77:19:10"
	l := newLab(t, 19, labOptions{})
	pn := l.project(t)
	out := pn.provisionStatic(t, mac, staticPool{cidr: l.subnet + ".0/24", first: l.subnet + ".200", last: l.subnet + ".220", gateway: l.serverIP(), dns: l.serverIP()})
	want := l.subnet + ".200"
	if !strings.Contains(out, "static address "+want+"/24") {
		t.Errorf("provision does not show the static address:\n%s", out)
	}
	nodeFile := pn.nodeFile("metal-control-001")
	if node := readFile(nodeFile); !strings.Contains(node, "private_ip: "+want+"\n") {
		t.Fatalf("node file:\n%s", node)
	}

	l.serve(t, media)
	m := l.boot(t, vmOptions{name: "metal-control-001", mac: mac, rom: true, limit: 60 * time.Second})
	m.wantOK(t, "metal-control-001.")
	m.wantDetail(t, "network=from-answer", "address="+want+"/24")
	if ip := m.markerField("ip"); !strings.HasPrefix(ip, l.subnet+".1") || ip == want {
		t.Errorf("the machine's lease %q: want one of the site DHCP server's range, not the static address", ip)
	}
	for _, s := range []string{"static address " + want + "/24 on ", "ID_NET_NAME_MAC:*525400771910"} {
		if !strings.Contains(readFile(filepath.Join(l.dir, "vm-metal-control-001", "serial.log")), s) {
			t.Errorf("the emulator's log lacks %q", s)
		}
	}
	l.wantInstallReport(t, "metal-control-001", m)

	var listed []struct {
		Hostname string `json:"hostname"`
		Network  struct {
			PrivateIP   string `json:"private_ip"`
			InstalledIP string `json:"installed_ip"`
		} `json:"network"`
	}
	if err := json.Unmarshal([]byte(pn.run(t, "list", "metal", "-o", "json")), &listed); err != nil || len(listed) != 1 || listed[0].Network.PrivateIP != want {
		t.Errorf("plasma-node list -o json: %+v %v; want %s's private_ip %s", listed, err, "metal-control-001", want)
	}
	if out := pn.run(t, "refresh", "metal"); !strings.Contains(out, "Refreshed metal-control-001@metal: installed address "+want+", 2 host keys") {
		t.Errorf("refresh: %q", out)
	}
	node := readFile(nodeFile)
	if strings.Contains(node, "installed_ip") || !strings.Contains(node, "private_ip: "+want+"\n") || !strings.Contains(node, "ssh_host_keys:") {
		t.Errorf("the node file after refresh:\n%s", node)
	}
	var regs []struct {
		Name   string `json:"name"`
		Static string `json:"static_address"`
	}
	json.Unmarshal([]byte(l.np(t, "list", "-o", "json")), &regs)
	if i := slices.IndexFunc(regs, func(r struct {
		Name   string `json:"name"`
		Static string `json:"static_address"`
	}) bool {
		return r.Name == "metal-control-001"
	}); i < 0 || regs[i].Static != want+"/24" {
		t.Errorf("node-provisioner list -o json: %+v; want metal-control-001's static_address %s/24", regs, want)
	}
}
