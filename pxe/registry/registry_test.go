package registry

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/answer"
)

func mustPool(t testing.TB, spec string) DataPool {
	t.Helper()
	p, err := ParsePoolSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var created = time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC)

func TestNormalizeMAC(t *testing.T) {
	tests := map[string]struct {
		in   string
		want string
	}{
		// TAPPaaS TestNormalizeMac.test_normalizes_case_and_separator
		"upper case and dashes are normalised": {in: "AA-BB-CC-DD-EE-0F", want: "aa:bb:cc:dd:ee:0f"},
		"surrounding whitespace is stripped":   {in: "  aa:bb:cc:dd:ee:0f\t\n", want: "aa:bb:cc:dd:ee:0f"},
		"a 9.2 installer's upper-case MAC":     {in: "52:54:00:BA:5E:11", want: "52:54:00:ba:5e:11"},
		// TAPPaaS TestNormalizeMac.test_rejects_garbage
		"five pairs are refused":          {in: "aa:bb:cc:dd:ee"},
		"nonsense is refused":             {in: "nonsense"},
		"a non-hex digit is refused":      {in: "aa:bb:cc:dd:ee:gg"},
		"an empty MAC is refused":         {in: ""},
		"seven pairs are refused":         {in: "aa:bb:cc:dd:ee:ff:00"},
		"dots (Cisco style) are refused":  {in: "aabb.ccdd.eeff"},
		"a MAC without separators fails":  {in: "aabbccddeeff"},
		"single-digit groups are refused": {in: "a:b:c:d:e:f"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := NormalizeMAC(tc.in)
			if tc.want == "" {
				if !errors.Is(err, ErrInvalidMAC) {
					t.Fatalf("NormalizeMAC(%q) = %q, %v; want ErrInvalidMAC", tc.in, got, err)
				}
				if !strings.HasPrefix(err.Error(), "invalid MAC address: ") {
					t.Errorf("error %q does not start as TAPPaaS's", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("NormalizeMAC(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestNormalizeMACErrorText(t *testing.T) {
	_, err := NormalizeMAC("nonsense")
	want := `invalid MAC address: "nonsense" (want a NIC's own address: six hex pairs such as 52:54:00:12:34:56, not broadcast, multicast or all zero)`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

func TestValidateName(t *testing.T) {
	tests := map[string]struct {
		name string
		ok   bool
	}{
		"a TAPPaaS node name is fine":       {"tappaas3", true},
		"dashes and underscores are fine":   {"zztest-node_1", true},
		"63 characters are fine":            {strings.Repeat("a", 63), true},
		"64 characters are too many":        {strings.Repeat("a", 64), false},
		"a space is refused (TAPPaaS test)": {"bad name!", false},
		"a dot is refused":                  {"a.b", false},
		"a slash is refused":                {"../x", false},
		"an empty name is refused":          {"", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := ValidateName(tc.name)
			if tc.ok != (err == nil) {
				t.Fatalf("ValidateName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
			}
			if err != nil && (!errors.Is(err, ErrInvalidName) || !errors.Is(err, ErrInvalidRegistration)) {
				t.Errorf("error %v does not wrap ErrInvalidName and ErrInvalidRegistration", err)
			}
		})
	}
}

// TestValidateHostname: a registration's name becomes the host name, and
// the installer's Fqdn type (proxmox-network-types/src/fqdn.rs; before
// 9.2 proxmox-installer-common/src/utils.rs) refuses a numeric one.
func TestValidateHostname(t *testing.T) {
	tests := map[string]struct {
		name string
		ok   bool
	}{
		"letters and digits are fine":   {"pve3", true},
		"digits then a letter are fine": {"3pve", true},
		"digits alone are refused":      {"123", false},
		"a single digit is refused":     {"7", false},
		"an underscore is refused":      {"pve_3", false},
		"upper case is refused":         {"PVE3", false},
		"a trailing dash is refused":    {"pve-", false},
		"digits with a dash are fine":   {"1-2", true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := ValidateHostname(tc.name)
			if tc.ok != (err == nil) {
				t.Fatalf("ValidateHostname(%q) = %v, want ok=%v", tc.name, err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidName) {
				t.Errorf("error %v does not wrap ErrInvalidName", err)
			}
		})
	}
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "registry", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestDecodeRegistrationFixtures(t *testing.T) {
	tests := map[string]struct {
		file string
		stem string
		want Registration
		// sameBytes: encoding the result gives the file back byte for byte.
		sameBytes bool
	}{
		"TAPPaaS's documented registration loads unchanged and is written back identically": {
			file: "tappaas3.json", stem: "tappaas3", sameBytes: true,
			want: Registration{
				Name: "tappaas3", MACs: []string{"aa:bb:cc:dd:ee:ff"},
				BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"},
				Pools:    []DataPool{{Name: "tanka1", Layout: LayoutSingle, Disks: []string{"nvme0n1"}}},
				Created:  created,
			},
		},
		"TAPPaaS's original cut without boot_disk boots from sda": {
			file: "tappaas-original.json", stem: "tappaas-original",
			want: Registration{
				Name: "tappaas-original", BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"},
				Pools:   []DataPool{{Name: "tanka1", Layout: LayoutMirror, Disks: []string{"sdb", "sdc"}}},
				Created: created.Add(123456 * time.Microsecond),
			},
		},
		"a file TAPPaaS consumed records its install_ip": {
			file: "tappaas-consumed.json.consumed", stem: "tappaas-consumed", sameBytes: true,
			want: Registration{
				Name: "tappaas-consumed", MACs: []string{"de:ad:be:ef:99:01"}, Created: created,
				Consumed: &ConsumeRecord{ClientIP: "10.0.0.119"},
			},
		},
		"the seed's serials, a messy MAC, a naive time and an unknown key load": {
			file: "tappaas-seed.json", stem: "tappaas-seed",
			want: Registration{
				Name: "tappaas-seed", MACs: []string{"aa:bb:cc:dd:ee:0f"},
				BootDisk: answer.BootDisk{Kind: answer.BootDiskSerial, Value: "25414A800205"},
				Pools:    []DataPool{{Name: "tanka1", Layout: LayoutSingle, Disks: []string{"50026B73842AD86F"}}},
				Created:  created,
				Extra:    map[string]json.RawMessage{"site": json.RawMessage(`{"zone":"mgmt"}`)},
			},
		},
		"every field of ours round-trips": {
			file: "ours.json", stem: "ours", sameBytes: true,
			want: Registration{
				Name: "ours", MACs: []string{"aa:bb:cc:dd:ee:03", "aa:bb:cc:dd:ee:04"},
				BootDisk: answer.BootDisk{Kind: answer.BootDiskSerial, Value: "S4EWNX0N123456"},
				Pools: []DataPool{
					{Name: "tankb1", Layout: LayoutMirror, Disks: []string{"WD-WCC4E1111111", "WD-WCC4E2222222"}},
					{Name: "tankc1", Layout: LayoutRaidz2, Disks: []string{"sdb", "sdc", "sdd"}},
				},
				Created: created, Serial: "SN-1234", UUID: "bcf43ddf-6d92-4ace-b93f-76f71ffe4495",
				Consumed: &ConsumeRecord{
					Time: time.Date(2026, 7, 7, 8, 30, 0, 500_000_000, time.UTC), ClientIP: "10.0.0.119",
					MACs: []string{"AA:BB:CC:DD:EE:03", "aa:bb:cc:dd:ee:04"}, Serial: "SN-1234", UUID: "bcf43ddf-6d92-4ace-b93f-76f71ffe4495",
				},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			data := readFixture(t, tc.file)
			got, err := DecodeRegistration(data, tc.stem)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DecodeRegistration (-want +got):\n%s", diff)
			}
			out, err := EncodeRegistration(got)
			if err != nil {
				t.Fatal(err)
			}
			if tc.sameBytes {
				if diff := cmp.Diff(string(data), string(out)); diff != "" {
					t.Errorf("encoded file differs (-fixture +encoded):\n%s", diff)
				}
			}
			again, err := DecodeRegistration(out, tc.stem)
			if err != nil {
				t.Fatalf("decode the encoded file: %v\n%s", err, out)
			}
			if diff := cmp.Diff(got, again); diff != "" {
				t.Errorf("round trip (-first +second):\n%s", diff)
			}
		})
	}
}

func TestEncodeRegistrationKeyOrder(t *testing.T) {
	r := Registration{Name: "tappaas3", BootDisk: answer.BootDisk{}, Created: created,
		Extra: map[string]json.RawMessage{"zeta": json.RawMessage(`1`), "alpha": json.RawMessage(`"<&>"`)}}
	out, err := EncodeRegistration(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "name": "tappaas3",
  "macs": [],
  "boot_disk": "ask",
  "pools": [],
  "created": "2026-07-06T12:00:00+00:00",
  "alpha": "<&>",
  "zeta": 1
}
`
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("encoded (-want +got):\n%s", diff)
	}
}

func TestDecodeRegistrationRefuses(t *testing.T) {
	tests := map[string]struct {
		json    string
		stem    string
		wantErr error
	}{
		"a file that is not JSON":               {json: `{"name": `, wantErr: ErrInvalidRegistration},
		"a JSON array":                          {json: `[]`, wantErr: ErrInvalidRegistration},
		"macs that are not a list":              {json: `{"name":"a","macs":"aa:bb:cc:dd:ee:ff"}`, wantErr: ErrInvalidRegistration},
		"a bad MAC":                             {json: `{"name":"a","macs":["nonsense"]}`, wantErr: ErrInvalidMAC},
		"a bad name":                            {json: `{"name":"bad name!"}`, wantErr: ErrInvalidName},
		"no name and no stem":                   {json: `{}`, wantErr: ErrInvalidName},
		"a name that is not the file's":         {json: `{"name":"other"}`, stem: "tappaas3", wantErr: ErrInvalidName},
		"a boot disk path":                      {json: `{"name":"a","boot_disk":"/dev/sda"}`, wantErr: ErrInvalidBootDisk},
		"a pool with a bad layout":              {json: `{"name":"a","pools":[{"name":"tank","layout":"raid5","disks":["sdb"]}]}`, wantErr: ErrInvalidPool},
		"two pools of one name":                 {json: `{"name":"a","pools":[{"name":"t","layout":"single","disks":["sdb"]},{"name":"t","layout":"single","disks":["sdc"]}]}`, wantErr: ErrInvalidPool},
		"a disk in two pools":                   {json: `{"name":"a","pools":[{"name":"t","layout":"single","disks":["sdb"]},{"name":"u","layout":"single","disks":["sdb"]}]}`, wantErr: ErrInvalidPool},
		"a pool on the boot disk":               {json: `{"name":"a","boot_disk":"sdb","pools":[{"name":"t","layout":"single","disks":["sdb"]}]}`, wantErr: ErrInvalidPool},
		"a boot serial matching a pool serial":  {json: `{"name":"a","boot_disk":"S4EW","pools":[{"name":"t","layout":"single","disks":["S4EW01"]}]}`, wantErr: ErrInvalidPool},
		"a bad created time":                    {json: `{"name":"a","created":"yesterday"}`, wantErr: ErrInvalidRegistration},
		"a placeholder serial pin":              {json: `{"name":"a","serial":"To Be Filled By O.E.M."}`, wantErr: ErrInvalidSerial},
		"an all-zero serial pin":                {json: `{"name":"a","serial":"00000000"}`, wantErr: ErrInvalidSerial},
		"a serial pin with a control character": {json: `{"name":"a","serial":"SN\u0001"}`, wantErr: ErrInvalidSerial},
		"a UUID pin that is not a UUID":         {json: `{"name":"a","uuid":"abc"}`, wantErr: ErrInvalidUUID},
		"an all-zero UUID pin":                  {json: `{"name":"a","uuid":"00000000-0000-0000-0000-000000000000"}`, wantErr: ErrInvalidUUID},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeRegistration([]byte(tc.json), tc.stem)
			if !errors.Is(err, tc.wantErr) || !errors.Is(err, ErrInvalidRegistration) {
				t.Errorf("DecodeRegistration(%s) = %v, want %v", tc.json, err, tc.wantErr)
			}
		})
	}
}

func TestDecodeRegistrationNormalises(t *testing.T) {
	got, err := DecodeRegistration([]byte(`{"macs":["AA-BB-CC-DD-EE-0F","aa:bb:cc:dd:ee:0f"],"uuid":" BCF43DDF-6D92-4ACE-B93F-76F71FFE4495 ","serial":" SN-1 "}`), "tappaas3")
	if err != nil {
		t.Fatal(err)
	}
	want := Registration{
		Name: "tappaas3", MACs: []string{"aa:bb:cc:dd:ee:0f"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"},
		Serial: "SN-1", UUID: "bcf43ddf-6d92-4ace-b93f-76f71ffe4495",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRegistrationJSONMethods(t *testing.T) {
	r := Registration{Name: "tappaas3", MACs: []string{"aa:bb:cc:dd:ee:ff"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskAny}, Created: created}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var got Registration
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, got); diff != "" {
		t.Errorf("json round trip (-want +got):\n%s", diff)
	}
	if err := json.Unmarshal([]byte(`{"name":"a","macs":["x"]}`), &got); !errors.Is(err, ErrInvalidMAC) {
		t.Errorf("Unmarshal of a bad MAC = %v, want ErrInvalidMAC", err)
	}
}
