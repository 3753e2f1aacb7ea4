package registry_test

import (
	"testing"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// TestARegistrationsSiteSettingsOverrideTheSites: the settings a
// registration carries (an enrolment rule's answer overrides) win over
// the site's in its answer, and survive its file's round trip.
func TestARegistrationsSiteSettingsOverrideTheSites(t *testing.T) {
	r := registry.Registration{Name: "pve-01", MACs: []string{"52:54:00:00:00:01"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"},
		Settings: &registry.Site{Keyboard: "de", Timezone: "Europe/Vienna"}}
	data, err := registry.EncodeRegistration(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := registry.DecodeRegistration(data, "pve-01")
	if err != nil {
		t.Fatal(err)
	}
	a, err := registry.Build(back, registry.BuildOptions{Site: registry.Site{Keyboard: "fr", Timezone: "UTC", Country: "at"}, RootPassword: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Global.Keyboard != "de" || a.Global.Timezone != "Europe/Vienna" || a.Global.Country != "at" {
		t.Errorf("answer keyboard %q, timezone %q, country %q; want de, Europe/Vienna (the registration's) and at (the site's)", a.Global.Keyboard, a.Global.Timezone, a.Global.Country)
	}
}
