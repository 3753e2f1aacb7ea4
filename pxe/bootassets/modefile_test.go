package bootassets

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	toml "github.com/pelletier/go-toml/v2"
)

func TestRenderModeFile(t *testing.T) {
	tests := map[string]struct {
		version, url, fp string
		golden           string
	}{
		"a 9.2 ISO with a URL":                   {"9.2", "https://192.0.2.10:8443/answer", "", "mode-9.2.toml"},
		"a 9.2 ISO with a URL and a fingerprint": {"9.2", "https://192.0.2.10:8443/answer", strings.ToUpper(testFingerprint), "mode-9.2-fp.toml"},
		"an 8.2 ISO gets no partition_label":     {"8.2", "http://192.0.2.10:8090/answer", "", "mode-8.2.toml"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := renderModeFile(tc.version, tc.url, tc.fp, "")
			golden(t, tc.golden, got)
			var m modeFile
			if err := toml.Unmarshal(got, &m); err != nil {
				t.Fatalf("not TOML: %v", err)
			}
			if m.Mode != "http" || m.HTTP.URL != tc.url || m.HTTP.CertFingerprint != tc.fp {
				t.Errorf("parsed back %+v", m)
			}
		})
	}
}

func TestHasPartitionLabel(t *testing.T) {
	tests := map[string]bool{"8.2": false, "8.3": true, "8.4": true, "9.2": true, "10.0": true, "7.4": false, "": true, "x.y": true}
	for v, want := range tests {
		if got := hasPartitionLabel(v); got != want {
			t.Errorf("hasPartitionLabel(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestNormalizeFingerprint(t *testing.T) {
	want := strings.ToUpper(testFingerprint)
	tests := map[string]struct {
		in      string
		want    string
		wantErr bool
	}{
		"lower case with colons":  {in: testFingerprint, want: want},
		"bare hex":                {in: strings.ReplaceAll(testFingerprint, ":", ""), want: want},
		"surrounding blanks":      {in: "  " + want + "\n", want: want},
		"a SHA-1 fingerprint":     {in: "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01", wantErr: true},
		"not hex":                 {in: strings.Repeat("zz", 32), wantErr: true},
		"an odd number of digits": {in: strings.ReplaceAll(testFingerprint, ":", "")[1:], wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := normalizeFingerprint(tc.in)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("normalizeFingerprint(%q) = %q, %v; want %q (error %v)", tc.in, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestCheckAnswerURL(t *testing.T) {
	tests := map[string]struct {
		url string
		ok  bool
	}{
		"http with a port":      {"http://192.0.2.10:8090/answer", true},
		"https with a query":    {"https://answers.example/answer?site=lab", true},
		"IPv6":                  {"http://[2001:db8::1]:8090/answer", true},
		"no scheme":             {"192.0.2.10:8090/answer", false},
		"a path only":           {"/answer", false},
		"tftp":                  {"tftp://192.0.2.10/answer", false},
		"a space":               {"http://h/an swer", false},
		"a dollar sign":         {"http://h/$HOME", false},
		"a non-ASCII host":      {"http://bücher.example/answer", false},
		"a backslash":           {`http://h/a\b`, false},
		"a newline":             {"http://h/a\nb", false},
		"no host":               {"http:///answer", false},
		"percent-encoded blank": {"http://h/an%20swer", true},
		"a link-local IPv6":     {"http://[fe80::1]:8090/answer", false},
		"a link-local and zone": {"http://[fe80::1%25eth0]:8090/answer", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := checkAnswerURL(tc.url)
			if (err == nil) != tc.ok {
				t.Errorf("checkAnswerURL(%q) = %v, want ok %v", tc.url, err, tc.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "answer URL") {
				t.Errorf("error %q does not name the answer URL", err)
			}
		})
	}
}

func TestParseVolumeUUID(t *testing.T) {
	report := "-volid 'PVE'\n-volume_date uuid '2026120218054000'\n-boot_image any cat_path='/boot.catalog'\n"
	if got := parseVolumeUUID(report); got != "2026120218054000" {
		t.Errorf("uuid = %q", got)
	}
	if got := parseVolumeUUID("-volid 'PVE'\n-volume_date uuid 'garbage'\n"); got != "" {
		t.Errorf("uuid of garbage = %q, want none", got)
	}
}

func TestXorrisoArgs(t *testing.T) {
	got := xorrisoMapArgs("2026120218054000", "/s/proxmox.iso", "/s/mode.toml", isoModeFile)
	want := []string{"-boot_image", "any", "keep", "-volume_date", "uuid", "2026120218054000", "-dev", "/s/proxmox.iso", "-map", "/s/mode.toml", "/auto-installer-mode.toml"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("map args (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"-boot_image", "any", "keep", "-dev", "i", "-map", "l", "/t"}, xorrisoMapArgs("", "i", "l", "/t")); diff != "" {
		t.Errorf("map args without uuid (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"-dev", "i", "-report_system_area", "cmd"}, xorrisoReportArgs("i")); diff != "" {
		t.Errorf("report args (-want +got):\n%s", diff)
	}
}

func TestParseCDInfo(t *testing.T) {
	tests := map[string]struct {
		in       string
		want     cdInfo
		wantName string
		wantErr  bool
	}{
		"a Proxmox VE .cd-info": {in: testCDInfo, want: cdInfo{Product: "pve", ProductLong: "Proxmox VE", Version: "9.2", ISORelease: "1"}, wantName: "9.2-1"},
		"double quotes and lower-case keys": {in: "product=\"PBS\"\nrelease=\"4.1\"\nisorelease=\"2\"\n",
			want: cdInfo{Product: "pbs", Version: "4.1", ISORelease: "2"}, wantName: "pbs-4.1-2"},
		"no ISO release": {in: "RELEASE=8.4\n", want: cdInfo{Version: "8.4"}, wantName: "8.4"},
		"no release":     {in: "PRODUCT='pve'\n", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := parseCDInfo([]byte(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("cd-info (-want +got):\n%s", diff)
			}
			if got.releaseName() != tc.wantName {
				t.Errorf("release name %q, want %q", got.releaseName(), tc.wantName)
			}
		})
	}
}

func FuzzParseCDInfo(f *testing.F) {
	f.Add([]byte(testCDInfo))
	f.Add([]byte("RELEASE=''\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ci, err := parseCDInfo(b)
		if err == nil && ci.Version == "" {
			t.Fatal("accepted a .cd-info without a release")
		}
	})
}

func FuzzParseManifest(f *testing.F) {
	rel := Release{Format: manifestFormat, Name: "9.2-1", Assets: []Asset{{Name: AssetKernel, Size: 3, SHA256: strings.Repeat("ab", 32)}}}
	b, _ := json.Marshal(rel)
	f.Add(b)
	f.Add([]byte(`{"format":1,"name":"../x","assets":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rel, err := parseManifest(b)
		if err != nil {
			return
		}
		for _, a := range rel.Assets {
			if strings.ContainsAny(a.Name, `/\`) || a.Name == ".." || a.Name == "." {
				t.Fatalf("accepted asset name %q", a.Name)
			}
		}
	})
}
