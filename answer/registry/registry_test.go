package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/answer"
)

// syncBuffer is a bytes.Buffer safe for a logger used by several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testRegistry opens a registry in a new temporary state folder and
// returns it with the text its logger wrote.
func testRegistry(t testing.TB) (*Store, *syncBuffer) {
	t.Helper()
	var logs syncBuffer
	g, err := Open(t.TempDir(), slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	return g, &logs
}

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
	want := `invalid MAC address: "nonsense" (want six hex pairs such as aa:bb:cc:dd:ee:ff)`
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
			out, err := encodeRegistration(got)
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
	out, err := encodeRegistration(r)
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

func TestOpenRegistryCreatesPrivateFolder(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	g, err := Open(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(state, "registrations"); g.Dir() != want {
		t.Errorf("Dir() = %q, want %q", g.Dir(), want)
	}
	fi, err := os.Stat(g.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o700 {
		t.Errorf("registrations folder mode = %v, want 0700", got)
	}
}

// TAPPaaS TestCrudRoundTrip.test_register_list_load_unregister
func TestRegistryCRUD(t *testing.T) {
	ctx := context.Background()
	g, _ := testRegistry(t)
	r := Registration{
		Name: "tappaas3", MACs: []string{"AA-BB-CC-DD-EE-FF"},
		BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"},
		Pools:    []DataPool{mustPool(t, "tanka1=single:nvme0n1")},
	}
	replaced, err := g.Put(ctx, r)
	if err != nil || replaced {
		t.Fatalf("Put = %v, %v; want false, nil", replaced, err)
	}
	path := filepath.Join(g.Dir(), "tappaas3.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the registration file is missing: %v", err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	if raw["name"] != "tappaas3" {
		t.Errorf("file name = %v", raw["name"])
	}
	if diff := cmp.Diff([]any{"aa:bb:cc:dd:ee:ff"}, raw["macs"]); diff != "" {
		t.Errorf("file macs are not normalised (-want +got):\n%s", diff)
	}
	wantPools := []any{map[string]any{"name": "tanka1", "layout": "single", "disks": []any{"nvme0n1"}}}
	if diff := cmp.Diff(wantPools, raw["pools"]); diff != "" {
		t.Errorf("file pools (-want +got):\n%s", diff)
	}
	if s, _ := raw["created"].(string); s == "" {
		t.Errorf("created is empty")
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode = %v, want 0600", fi.Mode().Perm())
	}

	pending, err := g.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || pending[0].Name != "tappaas3" {
		t.Fatalf("Pending = %+v, want tappaas3", pending)
	}
	got, err := g.Get(ctx, "tappaas3")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(pending[0], got); diff != "" {
		t.Errorf("Get and Pending differ (-pending +get):\n%s", diff)
	}
	if got.Created.IsZero() || got.MACs[0] != "aa:bb:cc:dd:ee:ff" {
		t.Errorf("Get = %+v", got)
	}

	if err := g.Delete(ctx, "tappaas3"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the file is still there after Delete: %v", err)
	}
	// A second unregister fails (TAPPaaS returns False).
	if err := g.Delete(ctx, "tappaas3"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Delete = %v, want ErrNotFound", err)
	}
	if _, err := g.Get(ctx, "tappaas3"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Delete = %v, want ErrNotFound", err)
	}
	pending, err = g.Pending(ctx)
	if err != nil || len(pending) != 0 {
		t.Errorf("Pending after Delete = %+v, %v", pending, err)
	}
}

// TAPPaaS TestCrudRoundTrip.test_register_rejects_bad_name
func TestRegistryPutRefusesBadInput(t *testing.T) {
	tests := map[string]struct {
		r    Registration
		want error
	}{
		"a bad name":         {Registration{Name: "bad name!"}, ErrInvalidName},
		"a bad MAC":          {Registration{Name: "a", MACs: []string{"nonsense"}}, ErrInvalidMAC},
		"a bad boot disk":    {Registration{Name: "a", BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "/dev/sda"}}, ErrInvalidBootDisk},
		"a bad pool":         {Registration{Name: "a", Pools: []DataPool{{Name: "t", Layout: "raid5", Disks: []string{"sdb"}}}}, ErrInvalidPool},
		"a placeholder UUID": {Registration{Name: "a", UUID: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"}, ErrInvalidUUID},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g, _ := testRegistry(t)
			if _, err := g.Put(context.Background(), tc.r); !errors.Is(err, tc.want) || !errors.Is(err, ErrInvalidRegistration) {
				t.Fatalf("Put = %v, want %v", err, tc.want)
			}
			ents, err := os.ReadDir(g.Dir())
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if e.Name() != ".lock" {
					t.Errorf("Put of bad input left %s", e.Name())
				}
			}
		})
	}
}

func TestRegistryBadNamesNeverTouchFiles(t *testing.T) {
	ctx := context.Background()
	g, _ := testRegistry(t)
	for _, name := range []string{"../x", "a/b", "", "a.b"} {
		if _, err := g.Get(ctx, name); !errors.Is(err, ErrInvalidName) {
			t.Errorf("Get(%q) = %v, want ErrInvalidName", name, err)
		}
		if err := g.Delete(ctx, name); !errors.Is(err, ErrInvalidName) {
			t.Errorf("Delete(%q) = %v, want ErrInvalidName", name, err)
		}
		if _, err := g.Consume(ctx, name, ConsumeRecord{}); !errors.Is(err, ErrInvalidName) {
			t.Errorf("Consume(%q) = %v, want ErrInvalidName", name, err)
		}
	}
}

// TAPPaaS TestCrudRoundTrip.test_reregister_replaces
func TestRegistryReregisterReplaces(t *testing.T) {
	ctx := context.Background()
	g, logs := testRegistry(t)
	if _, err := g.Put(ctx, Registration{Name: "tappaas3", MACs: []string{"aa:bb:cc:dd:ee:01"}}); err != nil {
		t.Fatal(err)
	}
	replaced, err := g.Put(ctx, Registration{Name: "tappaas3", MACs: []string{"aa:bb:cc:dd:ee:02"}})
	if err != nil || !replaced {
		t.Fatalf("second Put = %v, %v; want true, nil", replaced, err)
	}
	pending, err := g.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 {
		t.Fatalf("Pending has %d entries, want 1", len(pending))
	}
	if diff := cmp.Diff([]string{"aa:bb:cc:dd:ee:02"}, pending[0].MACs); diff != "" {
		t.Errorf("MACs after re-registering (-want +got):\n%s", diff)
	}
	if !strings.Contains(logs.String(), "level=WARN msg=\"registration replaced\" node=tappaas3") {
		t.Errorf("no warning about the replacement in the log:\n%s", logs)
	}
}

func TestRegistryReregisterAfterConsumeIsPendingAgain(t *testing.T) {
	ctx := context.Background()
	g, logs := testRegistry(t)
	if _, err := g.Put(ctx, Registration{Name: "tappaas3"}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Consume(ctx, "tappaas3", ConsumeRecord{ClientIP: "10.0.0.5"}); err != nil {
		t.Fatal(err)
	}
	replaced, err := g.Put(ctx, Registration{Name: "tappaas3", MACs: []string{"aa:bb:cc:dd:ee:02"}})
	if err != nil || replaced {
		t.Fatalf("Put after Consume = %v, %v; want false, nil", replaced, err)
	}
	if !strings.Contains(logs.String(), "pending again") {
		t.Errorf("no note that the name is pending again:\n%s", logs)
	}
	pending, err := g.Pending(ctx)
	if err != nil || len(pending) != 1 || pending[0].Consumed != nil {
		t.Fatalf("Pending = %+v, %v; want tappaas3, not consumed", pending, err)
	}
	// The old record stays until this registration is consumed in turn.
	consumed, err := g.Consumed(ctx)
	if err != nil || len(consumed) != 1 || consumed[0].Consumed.ClientIP != "10.0.0.5" {
		t.Fatalf("Consumed = %+v, %v", consumed, err)
	}
	if _, err := g.Consume(ctx, "tappaas3", ConsumeRecord{ClientIP: "10.0.0.6"}); err != nil {
		t.Fatal(err)
	}
	consumed, err = g.Consumed(ctx)
	if err != nil || len(consumed) != 1 || consumed[0].Consumed.ClientIP != "10.0.0.6" || consumed[0].MACs[0] != "aa:bb:cc:dd:ee:02" {
		t.Fatalf("Consumed after the second consumption = %+v, %v", consumed, err)
	}
}

func TestRegistryPutKeepsCreatedAndClearsConsumed(t *testing.T) {
	ctx := context.Background()
	g, _ := testRegistry(t)
	r := Registration{Name: "tappaas3", Created: created, Consumed: &ConsumeRecord{ClientIP: "10.0.0.1"}}
	if _, err := g.Put(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := g.Get(ctx, "tappaas3")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Created.Equal(created) || got.Consumed != nil {
		t.Errorf("Get = %+v; want the given Created and no Consumed", got)
	}
}

func TestRegistryPendingSkipsWhatIsNotPending(t *testing.T) {
	ctx := context.Background()
	g, logs := testRegistry(t)
	for _, n := range []string{"b-node", "a-node", "c-node"} {
		if _, err := g.Put(ctx, Registration{Name: n}); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"tappaas9.json.tmp":           `{"name":"tappaas9"}`, // TAPPaaS's temporary file
		".tmp-x.json-123":             `{"name":"x"}`,        // ours
		".tmp-y.json":                 `{"name":"y"}`,
		"served.json.consumed":        `{"name":"served"}`,
		"broken.json":                 `{"name": `,
		"bad name.json":               `{}`,
		"stolen.json.claim-0011":      `{"name":"stolen"}`,
		"notes.txt":                   "hello",
		"d-node.json.consumed.json":   `{"name":"d-node"}`, // name with dots
		"mismatch.json":               `{"name":"other"}`,
		"tappaas3.json.consumed.json": `{}`,
	}
	for n, content := range files {
		if err := os.WriteFile(filepath.Join(g.Dir(), n), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pending, err := g.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range pending {
		names = append(names, r.Name)
	}
	if diff := cmp.Diff([]string{"a-node", "b-node", "c-node"}, names); diff != "" {
		t.Errorf("Pending names (-want +got):\n%s", diff)
	}
	for _, f := range []string{"broken.json", "mismatch.json"} {
		if !strings.Contains(logs.String(), f) {
			t.Errorf("no warning naming %s:\n%s", f, logs)
		}
	}
}

func TestRegistryHonoursContext(t *testing.T) {
	g, _ := testRegistry(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.Put(ctx, Registration{Name: "a"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Put = %v, want context.Canceled", err)
	}
	if _, err := g.Pending(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Pending = %v, want context.Canceled", err)
	}
	if _, err := g.Get(ctx, "a"); !errors.Is(err, context.Canceled) {
		t.Errorf("Get = %v, want context.Canceled", err)
	}
	if err := g.Delete(ctx, "a"); !errors.Is(err, context.Canceled) {
		t.Errorf("Delete = %v, want context.Canceled", err)
	}
	if _, err := g.Consume(ctx, "a", ConsumeRecord{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Consume = %v, want context.Canceled", err)
	}
}

func TestOpenRegistryRemovesTemporaryFiles(t *testing.T) {
	state := t.TempDir()
	dir := filepath.Join(state, "registrations")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, ".tmp-tappaas3.json-99")
	if err := os.WriteFile(tmp, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(state, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary file survived: %v", err)
	}
}

func FuzzLoadRegistration(f *testing.F) {
	ents, err := os.ReadDir(filepath.Join("testdata", "registry"))
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range ents {
		if strings.Contains(e.Name(), ".json") {
			f.Add(readFixture(f, e.Name()), "")
		}
	}
	f.Add([]byte(`{"macs":["AA-BB-CC-DD-EE-0F"],"boot_disk":"any","x":null}`), "tappaas3")
	f.Add([]byte(`{"name":"a","pools":null,"macs":null,"install_ip":""}`), "")
	f.Add([]byte(`{"name":"a","created":"2026-07-06T12:00:00.5Z","consumed_macs":[]}`), "a")
	f.Fuzz(func(t *testing.T, data []byte, stem string) {
		r, err := DecodeRegistration(data, stem)
		if err != nil {
			if !errors.Is(err, ErrInvalidRegistration) {
				t.Fatalf("error %v does not wrap ErrInvalidRegistration", err)
			}
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("decoded registration does not validate: %v", err)
		}
		out, err := encodeRegistration(r)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		again, err := DecodeRegistration(out, r.Name)
		if err != nil {
			t.Fatalf("decode the encoded registration: %v\n%s", err, out)
		}
		if diff := cmp.Diff(r, again, cmp.Comparer(func(a, b json.RawMessage) bool {
			var x, y any
			return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && cmp.Equal(x, y)
		})); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

// The answer server's path through the registry: a registration, the
// installer's request matched against the pending ones, and the one-shot
// consumption.
func ExampleStore() {
	ctx := context.Background()
	state, err := os.MkdirTemp("", "example-registry")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(state)

	g, err := Open(state, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	boot, _ := ParseBootDisk("25414A800205")
	pool, _ := ParsePoolSpec("tanka1=single:50026B73842AD86F")
	mac, _ := NormalizeMAC("AA-BB-CC-DD-EE-FF")
	if _, err := g.Put(ctx, Registration{Name: "tappaas3", MACs: []string{mac}, BootDisk: boot, Pools: []DataPool{pool}}); err != nil {
		fmt.Println(err)
		return
	}

	// The installer POSTs its system info; a 9.2 ISO sends upper-case MACs.
	pending, _ := g.Pending(ctx)
	r, reason, err := Match(pending, []string{"AA:BB:CC:DD:EE:FF"}, "SN-1234", "")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("matched", r.Name, "by", reason, "boot filter", r.BootDisk.UdevFilter())

	if _, err := g.Consume(ctx, r.Name, ConsumeRecord{ClientIP: "10.0.0.119", MACs: []string{"AA:BB:CC:DD:EE:FF"}, Serial: "SN-1234"}); err != nil {
		fmt.Println(err)
		return
	}
	_, err = g.Consume(ctx, r.Name, ConsumeRecord{})
	fmt.Println(errors.Is(err, ErrAlreadyConsumed))
	pending, _ = g.Pending(ctx)
	_, _, err = Match(pending, []string{"AA:BB:CC:DD:EE:FF"}, "", "")
	fmt.Println(errors.Is(err, ErrNoMatch))
	// Output:
	// matched tappaas3 by mac boot filter map[ID_SERIAL:*25414A800205*]
	// true
	// true
}
