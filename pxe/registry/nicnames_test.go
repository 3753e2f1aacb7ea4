package registry

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/answer"
)

// TestBuildPinsNICNames: a registration's NIC names, or with the site's
// pin_nic_names the names nic0, nic1… in the order of its MACs, become
// the answer's network.interface-name-pinning for installers from 9.1;
// older installers, which have no pinning, get none.
func TestBuildPinsNICNames(t *testing.T) {
	disk := answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}
	macs := []string{"52:54:00:00:00:0a", "52:54:00:00:00:0b"}
	named := Registration{Name: "pve1", MACs: macs, BootDisk: disk, NICNames: map[string]string{"52:54:00:00:00:0b": "lan0"}}
	plain := Registration{Name: "pve1", MACs: macs, BootDisk: disk}
	tests := map[string]struct {
		reg  Registration
		site Site
		v    answer.Version
		want map[string]string // nil: no pinning
	}{
		"the registration's names for 9.1":           {named, Site{}, answer.Version91, map[string]string{"52:54:00:00:00:0b": "lan0"}},
		"the registration's names over the site's":   {named, Site{PinNICNames: true}, answer.Version92, map[string]string{"52:54:00:00:00:0b": "lan0"}},
		"the site's setting names every MAC":         {plain, Site{PinNICNames: true}, answer.Version92, map[string]string{"52:54:00:00:00:0a": "nic0", "52:54:00:00:00:0b": "nic1"}},
		"no names without a setting":                 {plain, Site{}, answer.Version92, nil},
		"none for 9.0, which has no pinning":         {named, Site{PinNICNames: true}, answer.Version90, nil},
		"the newest installer when none is said":     {named, Site{}, 0, map[string]string{"52:54:00:00:00:0b": "lan0"}},
		"the site's setting without a MAC pins none": {Registration{Name: "pve1", BootDisk: disk, Serial: "S1"}, Site{PinNICNames: true}, answer.Version92, nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a, err := Build(tc.reg, BuildOptions{Site: tc.site, RootPassword: "probe-password", Installer: tc.v})
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]string
			if p := a.Network.InterfaceNamePinning; p != nil {
				if p.Enabled == nil || !*p.Enabled {
					t.Errorf("pinning not enabled: %+v", p)
				}
				got = p.Mapping
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("mapping (-want +got):\n%s", diff)
			}
			v := tc.v
			if v == 0 {
				v = answer.LatestVersion
			}
			if err := answer.Validate(a, v); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

// TestValidateNICNames: a NIC name is for one of the registration's MACs,
// by the installer's rule for interface names, and given once.
func TestValidateNICNames(t *testing.T) {
	base := func(names map[string]string) Registration {
		return Registration{Name: "pve1", MACs: []string{"52:54:00:00:00:0a", "52:54:00:00:00:0b"},
			BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}, NICNames: names}
	}
	tests := map[string]struct {
		names map[string]string
		want  string // "" valid
	}{
		"names for its MACs":        {map[string]string{"52:54:00:00:00:0a": "mgmt0", "52:54:00:00:00:0b": "lan_1"}, ""},
		"a MAC it does not pin":     {map[string]string{"52:54:00:00:00:0c": "lan0"}, "52:54:00:00:00:0c is not one of its MACs"},
		"a MAC not in normal form":  {map[string]string{"52-54-00-00-00-0A": "lan0"}, "is not one of its MACs"},
		"a name too long":           {map[string]string{"52:54:00:00:00:0a": "waytoolonginterface"}, "at most 15 characters"},
		"a name of one character":   {map[string]string{"52:54:00:00:00:0a": "l"}, "want a letter, then"},
		"a name starting with 0":    {map[string]string{"52:54:00:00:00:0a": "0lan"}, "want a letter, then"},
		"a name with a dash":        {map[string]string{"52:54:00:00:00:0a": "lan-0"}, "want a letter, then"},
		"one name for two MACs":     {map[string]string{"52:54:00:00:00:0a": "lan0", "52:54:00:00:00:0b": "LAN0"}, "given to two MACs"},
		"no names at all is fine":   {nil, ""},
		"an empty map is no names":  {map[string]string{}, ""},
		"a VLAN-style suffix is ok": {map[string]string{"52:54:00:00:00:0a": "lan0.10"}, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := base(tc.names).Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Validate: got %v, want %q", err, tc.want)
			case tc.want != "" && !errors.Is(err, ErrInvalidNICName):
				t.Fatalf("Validate: %v does not wrap ErrInvalidNICName", err)
			}
		})
	}
	// The file format carries them as nic_names.
	r := base(map[string]string{"52:54:00:00:00:0b": "lan0"})
	out, err := json.Marshal(r)
	if err != nil || !strings.Contains(string(out), `"nic_names":{"52:54:00:00:00:0b":"lan0"}`) {
		t.Fatalf("Marshal: %s, %v", out, err)
	}
	var back Registration
	if err := json.Unmarshal(out, &back); err != nil || !cmp.Equal(back.NICNames, r.NICNames) {
		t.Errorf("round trip: %v, %v", back.NICNames, err)
	}
}

// TestPinNICNames: nic0, nic1… for the MACs in order, keeping the names
// given and skipping the nicN names they take.
func TestPinNICNames(t *testing.T) {
	got := PinNICNames([]string{"52:54:00:00:00:0a", "52:54:00:00:00:0b", "52:54:00:00:00:0c"}, map[string]string{"52:54:00:00:00:0b": "nic0"})
	want := map[string]string{"52:54:00:00:00:0a": "nic1", "52:54:00:00:00:0b": "nic0", "52:54:00:00:00:0c": "nic2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PinNICNames (-want +got):\n%s", diff)
	}
}
