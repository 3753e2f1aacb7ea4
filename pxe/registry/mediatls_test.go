package registry

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/answer"
)

// TestMediaTLSOfTakesTheBMCsOrTheSites: a BMC's media_tls, or the
// site's, makes its medium's URL HTTPS; both read from their files.
func TestMediaTLSOfTakesTheBMCsOrTheSites(t *testing.T) {
	redfish := func(tls bool) *BMC { return &BMC{URL: "redfish://10.0.0.5", User: "root", MediaTLS: tls} }
	for _, c := range []struct {
		name string
		site Site
		bmc  *BMC
		want bool
	}{
		{"neither", Site{}, redfish(false), false},
		{"the BMC's", Site{}, redfish(true), true},
		{"the site's", Site{MediaTLS: true}, redfish(false), true},
		{"the site's, no BMC", Site{MediaTLS: true}, nil, true},
		{"no BMC", Site{}, nil, false},
	} {
		if got := c.site.MediaTLSOf(Registration{Name: "n1", BMC: c.bmc}); got != c.want {
			t.Errorf("%s: MediaTLSOf = %v, want %v", c.name, got, c.want)
		}
	}
	path := filepath.Join(t.TempDir(), "site.json")
	if err := os.WriteFile(path, []byte(`{"media_tls": true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := loadSite(path)
	if err != nil || !s.MediaTLS {
		t.Errorf("site.json media_tls: %+v, %v", s, err)
	}
	if !(Site{}).Merge(Site{MediaTLS: true}).MediaTLS {
		t.Error("Merge drops media_tls")
	}
	var r Registration
	if err := json.Unmarshal([]byte(`{"name":"n1","bmc":{"url":"redfish://10.0.0.5","user":"root","media_tls":true}}`), &r); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(redfish(true), r.BMC); diff != "" {
		t.Errorf("bmc media_tls (-want +got):\n%s", diff)
	}
}

// TestMediaTLSNeedsVirtualMedia: media_tls is refused on a BMC without
// virtual media (IPMI) and on a registration that boots over the
// network, as a media answer is; with virtual media behind Redfish, or
// with the boot method left to the site, it is taken.
func TestMediaTLSNeedsVirtualMedia(t *testing.T) {
	tls := func(url string) *BMC { return &BMC{URL: url, User: "root", MediaTLS: true} }
	tests := map[string]struct {
		reg  Registration
		kind error  // nil accepts
		err  string // what the refusal says
	}{
		"virtual media behind Redfish":       {reg: Registration{BootMethod: BootVirtualMedia, BMC: tls("redfish://10.0.0.5")}},
		"the site's boot method":             {reg: Registration{BMC: tls("redfish://10.0.0.5")}},
		"an IPMI BMC":                        {reg: Registration{BMC: tls("ipmi://10.0.0.5")}, kind: ErrInvalidBMC, err: "BMC ipmi://10.0.0.5: media_tls is for virtual media, which ipmi has not: give a redfish:// BMC, or turn media_tls off"},
		"the network boot method":            {reg: Registration{BootMethod: BootNetwork, BMC: tls("redfish://10.0.0.5")}, kind: ErrInvalidBootMethod, err: "registration pve1: its BMC's media_tls is for the virtual-media boot method, and it boots over the network"},
		"media_tls off with the network one": {reg: Registration{BootMethod: BootNetwork, BMC: &BMC{URL: "ipmi://10.0.0.5", User: "root"}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := tc.reg
			r.Name, r.BootDisk = "pve1", answer.BootDisk{Kind: answer.BootDiskAny}
			err := r.Validate()
			if tc.kind == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, tc.kind) || !errors.Is(err, ErrInvalidRegistration) || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("got %v\nwant %v saying %q", err, tc.kind, tc.err)
			}
		})
	}
}
