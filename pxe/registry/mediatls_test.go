package registry

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
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
