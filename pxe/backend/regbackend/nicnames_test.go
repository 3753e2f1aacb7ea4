package regbackend_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/answer"
)

// TestAnswerPinsTheRegistrationsNICNames: a registration's NIC names
// are its 9.2 answer's network.interface-name-pinning; an 8.2 installer,
// which has no pinning, gets an answer without it (the names are left to
// the installer, not refused).
func TestAnswerPinsTheRegistrationsNICNames(t *testing.T) {
	names := map[string]string{"52:54:00:ba:5e:11": "mgmt0"}
	reg := mustReg(t, "pve1", []string{"52:54:00:ba:5e:11"}, "25414A800205")
	reg.NICNames = names
	e := newHandlerEnv(t, reg)
	status, got, _ := e.post(t, "", "application/json", sysinfo(t, "pve-9.2-synthetic.json"))
	if status != 200 {
		t.Fatalf("answer: %d %s", status, got)
	}
	a, err := answer.Decode([]byte(got), answer.Version92)
	if err != nil {
		t.Fatal(err)
	}
	p := a.Network.InterfaceNamePinning
	if p == nil || p.Enabled == nil || !*p.Enabled {
		t.Fatalf("the 9.2 answer pins no NIC names:\n%s", got)
	}
	if diff := cmp.Diff(names, p.Mapping); diff != "" {
		t.Errorf("mapping (-want +got):\n%s", diff)
	}

	reg82 := mustReg(t, "pve2", []string{"52:54:00:ba:5e:11"}, "25414A800205")
	reg82.NICNames = names
	e82 := newHandlerEnv(t, reg82)
	old := strings.Replace(string(sysinfo(t, "pve-9.2-synthetic.json")), `"release":"9.2"`, `"release":"8.2"`, 1)
	status, got, _ = e82.post(t, "", "application/json", []byte(old))
	if status != 200 || strings.Contains(got, "interface-name-pinning") || strings.Contains(got, "mgmt0") {
		t.Errorf("8.2 answer: %d, want 200 without pinning:\n%s", status, got)
	}
}
