package answer_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/answer"
)

func readSysinfo(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "sysinfo", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParseSystemInfoReadsTheInstallersBodies(t *testing.T) {
	tests := map[string]struct {
		file        string
		contentType string
		want        *answer.SystemInfo
		macs        []string
		serial      string
		uuid        string
		version     answer.Version
		hasVersion  bool
	}{
		"the 8.2-2 capture with the truncated charset": {
			file: "pve-8.2-2.json", contentType: "application/json; charset=utf-",
			want: &answer.SystemInfo{
				Product: answer.ProductInfo{FullName: "Proxmox VE", Product: "pve", EnableBtrfs: true},
				ISO:     answer.ISOInfo{Release: "8.2", ISORelease: "2"},
				DMI: answer.DMIInfo{
					System:    map[string]string{"name": "Standard PC (i440FX + PIIX, 1996)", "serial": "", "uuid": "bcf43ddf-6d92-4ace-b93f-76f71ffe4495", "sku": ""},
					Baseboard: map[string]string{},
					Chassis:   map[string]string{"asset_tag": "", "serial": ""},
				},
				NetworkInterfaces: []answer.NetworkInterface{{Link: "ens18", MAC: "bc:24:11:d5:36:d1"}},
			},
			macs: []string{"bc:24:11:d5:36:d1"}, uuid: "bcf43ddf-6d92-4ace-b93f-76f71ffe4495",
			version: answer.Version82, hasVersion: true,
		},
		"a 9.2 body with $schema, upper-case MACs and an unknown field": {
			file: "pve-9.2-synthetic.json", contentType: "application/json; charset=utf-8",
			macs: []string{"52:54:00:ba:5e:11"}, uuid: "bcf43ddf-6d92-4ace-b93f-76f71ffe4495",
			version: answer.Version92, hasVersion: true,
		},
		"the TAPPaaS fixture with no iso and a link without MAC": {
			file: "tappaas-fixture.json", contentType: "",
			macs: []string{"aa:bb:cc:dd:ee:03", "aa:bb:cc:dd:ee:04"}, serial: "SN-1234",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			si, err := answer.ParseSystemInfo(readSysinfo(t, tc.file), tc.contentType)
			if err != nil {
				t.Fatalf("ParseSystemInfo: %v", err)
			}
			if tc.want != nil {
				if diff := cmp.Diff(tc.want, si); diff != "" {
					t.Errorf("SystemInfo (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(tc.macs, si.MACs()); diff != "" {
				t.Errorf("MACs (-want +got):\n%s", diff)
			}
			if si.Serial() != tc.serial || si.UUID() != tc.uuid {
				t.Errorf("Serial, UUID = %q, %q, want %q, %q", si.Serial(), si.UUID(), tc.serial, tc.uuid)
			}
			v, ok := si.Version()
			if v != tc.version || ok != tc.hasVersion {
				t.Errorf("Version = %s, %v, want %s, %v", v, ok, tc.version, tc.hasVersion)
			}
		})
	}
	t.Run("$schema is read from 8.3 on", func(t *testing.T) {
		si, err := answer.ParseSystemInfo(readSysinfo(t, "pve-9.2-synthetic.json"), "application/json")
		if err != nil {
			t.Fatal(err)
		}
		if si.Schema == nil || si.Schema.Version != "1.0" {
			t.Errorf("Schema = %+v, want version 1.0", si.Schema)
		}
	})
}

func TestParseSystemInfoContentTypes(t *testing.T) {
	body := readSysinfo(t, "pve-8.2-2.json")
	tests := map[string]struct {
		contentType string
		ok          bool
	}{
		"none":                            {"", true},
		"application/json":                {"application/json", true},
		"with charset=utf-8 (8.3 and on)": {"application/json; charset=utf-8", true},
		"the 8.2 truncated charset=utf-":  {"application/json; charset=utf-", true},
		"upper case":                      {"Application/JSON; Charset=UTF-8", true},
		"a malformed parameter":           {"application/json; =;", true},
		"plain text":                      {"text/plain", false},
		"TOML":                            {"application/toml", false},
		"a form":                          {"application/x-www-form-urlencoded", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := answer.ParseSystemInfo(body, tc.contentType)
			if tc.ok && err != nil {
				t.Errorf("ParseSystemInfo(%q): %v", tc.contentType, err)
			}
			if !tc.ok && !errors.Is(err, answer.ErrBadSystemInfo) {
				t.Errorf("ParseSystemInfo(%q) error = %v, want ErrBadSystemInfo", tc.contentType, err)
			}
		})
	}
}

func TestParseSystemInfoRefusesWhatIsNotAnObject(t *testing.T) {
	tests := map[string]string{
		"an empty body":              "",
		"white space":                " \n ",
		"null":                       "null",
		"an array":                   `[{"network_interfaces":[]}]`,
		"a string":                   `"{}"`,
		"a number":                   "42",
		"broken JSON":                `{"iso":`,
		"two objects":                `{}{}`,
		"an object and garbage":      `{} x`,
		"iso of the wrong type":      `{"iso":"8.2"}`,
		"a MAC of the wrong type":    `{"network_interfaces":[{"link":"e","mac":42}]}`,
		"DMI values that are tables": `{"dmi":{"system":{"serial":{}}}}`,
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			if si, err := answer.ParseSystemInfo([]byte(body), "application/json"); !errors.Is(err, answer.ErrBadSystemInfo) {
				t.Errorf("ParseSystemInfo(%q) = %+v, %v, want ErrBadSystemInfo", body, si, err)
			}
		})
	}
}

func TestParseSystemInfoSurvivesDeepNesting(t *testing.T) {
	t.Run("beyond encoding/json's depth limit is an error", func(t *testing.T) {
		body := `{"x":` + strings.Repeat("[", 1_000_000) + strings.Repeat("]", 1_000_000) + `}`
		if _, err := answer.ParseSystemInfo([]byte(body), ""); !errors.Is(err, answer.ErrBadSystemInfo) {
			t.Errorf("error = %v, want ErrBadSystemInfo", err)
		}
	})
	t.Run("deep nesting in an unknown field within the limit parses", func(t *testing.T) {
		body := `{"x":` + strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000) + `,"network_interfaces":[{"mac":"AA-BB-CC-DD-EE-FF"}]}`
		si, err := answer.ParseSystemInfo([]byte(body), "")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"aa:bb:cc:dd:ee:ff"}, si.MACs()); diff != "" {
			t.Errorf("MACs (-want +got):\n%s", diff)
		}
	})
}

func TestSystemInfoMACs(t *testing.T) {
	tests := map[string]struct {
		macs []string
		want []string
	}{
		"lower case is kept":                 {[]string{"aa:bb:cc:dd:ee:0f"}, []string{"aa:bb:cc:dd:ee:0f"}},
		"9.2 upper case is lowered":          {[]string{"AA:BB:CC:DD:EE:0F"}, []string{"aa:bb:cc:dd:ee:0f"}},
		"dashes become colons":               {[]string{"AA-BB-CC-DD-EE-0F"}, []string{"aa:bb:cc:dd:ee:0f"}},
		"surrounding space is trimmed":       {[]string{" aa:bb:cc:dd:ee:0f\n"}, []string{"aa:bb:cc:dd:ee:0f"}},
		"payload order is kept":              {[]string{"02:00:00:00:00:02", "02:00:00:00:00:01"}, []string{"02:00:00:00:00:02", "02:00:00:00:00:01"}},
		"repeats are left out":               {[]string{"02:00:00:00:00:01", "02:00:00:00:00:01"}, []string{"02:00:00:00:00:01"}},
		"garbage is skipped":                 {[]string{"aa:bb:cc:dd:ee", "nonsense", "aa:bb:cc:dd:ee:gg", "", "aabbccddeeff", "aa:bb:cc:dd:ee:ff:00", "aa:bb.cc:dd:ee:ff"}, nil},
		"the all-zero address is skipped":    {[]string{"00:00:00:00:00:00", "02:00:00:00:00:01"}, []string{"02:00:00:00:00:01"}},
		"non-ASCII look-alikes are rejected": {[]string{"aa:bb:cc:dd:ee:\u212a\u212a"[:17]}, nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			si := &answer.SystemInfo{}
			for _, m := range tc.macs {
				si.NetworkInterfaces = append(si.NetworkInterfaces, answer.NetworkInterface{Link: "x", MAC: m})
			}
			if diff := cmp.Diff(tc.want, si.MACs()); diff != "" {
				t.Errorf("MACs (-want +got):\n%s", diff)
			}
		})
	}
}

var macRe = regexp.MustCompile(`^([0-9a-f]{2}:){5}[0-9a-f]{2}$`)

func FuzzParseSystemInfo(f *testing.F) {
	for _, name := range []string{"pve-8.2-2.json", "pve-9.2-synthetic.json", "tappaas-fixture.json"} {
		f.Add(readSysinfo(f, name), "application/json; charset=utf-")
	}
	f.Add([]byte(`{"network_interfaces":[{"mac":"AA-BB-CC-DD-EE-FF"},{"mac":null},7]}`), "")
	f.Add([]byte(`[`+strings.Repeat("[", 20000)), "application/json")
	f.Add([]byte(`{"iso":{"release":"9.2-1"}}`), "text/plain")
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		si, err := answer.ParseSystemInfo(body, contentType)
		if err != nil {
			if !errors.Is(err, answer.ErrBadSystemInfo) {
				t.Fatalf("error %v does not wrap ErrBadSystemInfo", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, m := range si.MACs() {
			if !macRe.MatchString(m) || seen[m] {
				t.Fatalf("MACs() = %q: not canonical or repeated", si.MACs())
			}
			seen[m] = true
		}
		if v, ok := si.Version(); ok && v == 0 {
			t.Fatalf("Version() = 0, true")
		}
		_ = si.Serial() + si.UUID()
		// What was parsed survives a JSON round trip.
		again, err := json.Marshal(si)
		if err != nil {
			t.Fatalf("marshal parsed system info: %v", err)
		}
		back, err := answer.ParseSystemInfo(again, "")
		if err != nil {
			t.Fatalf("re-parse: %v\n%s", err, again)
		}
		if diff := cmp.Diff(si.MACs(), back.MACs()); diff != "" {
			t.Fatalf("MACs changed by a round trip:\n%s", diff)
		}
	})
}

func ExampleParseSystemInfo() {
	body := []byte(`{"$schema":{"version":"1.0"},"iso":{"release":"9.2","isorelease":"1"},
		"dmi":{"system":{"serial":"SN-1234","uuid":"BCF43DDF-6D92-4ACE-B93F-76F71FFE4495"}},
		"network_interfaces":[{"link":"enp1s0","mac":"52:54:00:BA:5E:11"},{"link":"lo0"}]}`)
	si, err := answer.ParseSystemInfo(body, "application/json; charset=utf-8")
	if err != nil {
		fmt.Println(err)
		return
	}
	v, ok := si.Version()
	if !ok {
		v = answer.DefaultVersion
	}
	fmt.Println(v, si.MACs(), si.Serial(), si.UUID())
	// Output: 9.2 [52:54:00:ba:5e:11] SN-1234 bcf43ddf-6d92-4ace-b93f-76f71ffe4495
}
