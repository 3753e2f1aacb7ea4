package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// markerField is the value of key=value in the emulator's marker line.
func (m *machine) markerField(key string) string {
	for _, f := range strings.Fields(m.detail) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v
		}
	}
	return ""
}

// listedNode is what the check reads of list -o json's entries.
type listedNode struct {
	Name         string   `json:"name"`
	State        string   `json:"state"`
	Address      string   `json:"address"`
	Fingerprints []string `json:"host_key_fingerprints"`
	Install      *struct {
		HostKeys []string `json:"host_keys"`
	} `json:"install"`
}

// wantInstallReport wants node-provisioner list -o json to show node
// installed with the address and the ed25519 host key the emulator m
// posted in its webhook (its marker's address= and hostkey=).
func (l *bootLab) wantInstallReport(t *testing.T, node string, m *machine) {
	t.Helper()
	addr, fp := m.markerField("address"), m.markerField("hostkey")
	if addr == "" || !strings.HasPrefix(fp, "SHA256:") {
		t.Fatalf("%s: the marker names no address or host key: %q", node, m.detail)
	}
	var nodes []listedNode
	out := l.np(t, "list", "-o", "json")
	if err := json.Unmarshal([]byte(out), &nodes); err != nil {
		t.Fatalf("list -o json: %v\n%s", err, out)
	}
	i := slices.IndexFunc(nodes, func(n listedNode) bool { return n.Name == node })
	if i < 0 {
		t.Fatalf("list -o json has no %s:\n%s", node, out)
	}
	n := nodes[i]
	if n.State != "installed" || n.Address != addr || !slices.Contains(n.Fingerprints, fp) || n.Install == nil || len(n.Install.HostKeys) != 2 {
		t.Errorf("%s in list -o json: %+v; want installed at %s with host key %s (and the ECDSA one)\n%s", node, n, addr, fp, out)
	}
}
