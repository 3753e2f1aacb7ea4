package answer_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/answer"
)

func webhookSample(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "webhook", "pve-9.2-synthetic.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func hostKeys(t *testing.T, m map[string]any) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range m["ssh-public-host-keys"].(map[string]any) {
		f := strings.Fields(v.(string))
		out[k] = f[0] + " " + f[1]
	}
	return out
}

// TestParseInstallReportOfA92Body: what the inventory keeps of the body
// proxmox-post-hook 1.2 sends, and that ssh-keygen's fingerprints come
// out of its keys.
func TestParseInstallReportOfA92Body(t *testing.T) {
	m := webhookSample(t)
	raw, _ := json.Marshal(m)
	got, err := answer.ParseInstallReport(raw)
	if err != nil {
		t.Fatal(err)
	}
	k := hostKeys(t, m)
	want := &answer.InstallReport{
		Schema: "1.2", FQDN: "pve1.lab.example", MachineID: "4f3c2b1a09f8e7d6c5b4a39281706f5e",
		ProductVersion: "9.2.0", Kernel: "6.17.2-1-pve", BootMode: "efi", SecureBoot: true,
		Management: &answer.ReportInterface{Name: "nic0", MAC: "52:54:00:ba:5e:11", Address: netip.MustParsePrefix("192.0.2.41/24")},
		MACs:       []string{"52:54:00:ba:5e:11", "52:54:00:ba:5e:12"},
		NICNames:   map[string]string{"52:54:00:ba:5e:11": "nic0"},
		HostKeys:   []string{k["ed25519"], k["ecdsa"], k["rsa"]},
		BootDisks:  []answer.ReportDisk{{Name: "/dev/nvme0n1", Serial: "25414A800205", Size: 512110190592}},
		Token:      "np1:notasecret",
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Errorf("ParseInstallReport (-want +got):\n%s", diff)
	}
	// The token is a secret: what is kept of the report never holds it.
	if kept, _ := json.Marshal(got); strings.Contains(string(kept), "notasecret") {
		t.Errorf("the kept report holds the webhook token: %s", kept)
	}
	// ssh-keygen -lf of the three generated keys (testdata/webhook/README.md).
	wantFP := []string{"SHA256:4D27bvzYLJ3EVO25HEFvpoJ1Mums4LxBPaiAL2usvIw", "SHA256:Fa94RwW/dF1vJz8ppwnU+F8I7IFSWRCGcpmh1D+mioQ", "SHA256:bc5/XRtdwepUs1scqSF6DxJKIX+DJj82wF6C05yZzBE"}
	for i, key := range got.HostKeys {
		fp, err := answer.HostKeyFingerprint(key)
		if err != nil || fp != wantFP[i] {
			t.Errorf("fingerprint of key %d = %q, %v; want %s", i, fp, err, wantFP[i])
		}
	}
}

// TestParseInstallReportOfAnIPv6Management: an installer on an
// IPv6-only segment reports its management address as IPv6 with its
// prefix; it is kept as reported.
func TestParseInstallReportOfAnIPv6Management(t *testing.T) {
	m := webhookSample(t)
	ifs := m["network-interfaces"].([]any)
	ifs[0].(map[string]any)["address"] = "2001:db8:5::41/64"
	raw, _ := json.Marshal(m)
	got, err := answer.ParseInstallReport(raw)
	if err != nil {
		t.Fatal(err)
	}
	if got.Management == nil || got.Management.Address != netip.MustParsePrefix("2001:db8:5::41/64") {
		t.Errorf("management %+v, want 2001:db8:5::41/64", got.Management)
	}
}

// TestParseInstallReportRefusals: malformed known fields are refused,
// naming the field; what a newer minor schema adds, and what the
// installer could not read ("unknown"), is not.
func TestParseInstallReportRefusals(t *testing.T) {
	tests := map[string]struct {
		edit    func(m map[string]any)
		raw     string
		wantErr error
		errHas  string
	}{
		"a newer minor schema's fields are ignored": {edit: func(m map[string]any) {
			m["$schema"] = map[string]any{"version": "1.7"}
			m["tpm-info"] = map[string]any{"version": "2.0"}
			m["network-interfaces"].([]any)[0].(map[string]any)["link-speed"] = 10000
		}},
		"keys the installer could not read": {edit: func(m map[string]any) {
			m["ssh-public-host-keys"] = map[string]any{"ecdsa": "unknown", "ed25519": "unknown", "rsa": "unknown"}
			m["machine-id"] = "unknown"
		}},
		"a minimal body": {raw: `{"fqdn":"pve1.lab.example"}`},
		"not an object":  {raw: `installed`, wantErr: answer.ErrBadInstallReport, errHas: "want a JSON object"},
		"a schema of another major": {edit: func(m map[string]any) { m["$schema"] = map[string]any{"version": "2.0"} },
			wantErr: answer.ErrBadInstallReport, errHas: "schema 1.x"},
		"a secureboot of the wrong type": {edit: func(m map[string]any) { m["boot-info"] = map[string]any{"mode": "efi", "secureboot": "yes"} },
			wantErr: answer.ErrBadInstallReport, errHas: "boot-info.secureboot"},
		"an unknown boot mode": {edit: func(m map[string]any) { m["boot-info"] = map[string]any{"mode": "<script>"} },
			wantErr: answer.ErrBadInstallReport, errHas: "boot-info.mode"},
		"a bad MAC": {edit: func(m map[string]any) { m["network-interfaces"].([]any)[1].(map[string]any)["mac"] = "52:54:00" },
			wantErr: answer.ErrBadInstallReport, errHas: "network-interfaces[1].mac"},
		"an address without its prefix": {edit: func(m map[string]any) { m["network-interfaces"].([]any)[0].(map[string]any)["address"] = "192.0.2.41" },
			wantErr: answer.ErrBadInstallReport, errHas: "network-interfaces[0].address"},
		"two management interfaces": {edit: func(m map[string]any) { m["network-interfaces"].([]any)[1].(map[string]any)["is-management"] = true },
			wantErr: answer.ErrBadInstallReport, errHas: "second management interface"},
		"10 000 interfaces": {edit: func(m map[string]any) {
			var ifs []any
			for i := range 10000 {
				ifs = append(ifs, map[string]any{"name": fmt.Sprint("e", i), "mac": fmt.Sprintf("02:00:00:00:%02x:%02x", i>>8&0xff, i&0xff)})
			}
			m["network-interfaces"] = ifs
		}, wantErr: answer.ErrTooManyInterfaces, errHas: "10000 network interfaces"},
		"an invalid host key": {edit: func(m map[string]any) {
			m["ssh-public-host-keys"].(map[string]any)["ed25519"] = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMkZ root@pve1"
		}, wantErr: answer.ErrInvalidHostKey, errHas: "ssh-public-host-keys.ed25519"},
		"a host key in another algorithm's slot": {edit: func(m map[string]any) {
			k := m["ssh-public-host-keys"].(map[string]any)
			k["rsa"] = k["ed25519"]
		}, wantErr: answer.ErrInvalidHostKey, errHas: "a ssh-ed25519 key"},
		"a machine-id that is not one": {edit: func(m map[string]any) { m["machine-id"] = "../../etc" },
			wantErr: answer.ErrBadInstallReport, errHas: "machine-id"},
		"a control character in the FQDN": {edit: func(m map[string]any) { m["fqdn"] = "pve1\n.lab" },
			wantErr: answer.ErrBadInstallReport, errHas: "fqdn"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			raw := []byte(tc.raw)
			if tc.raw == "" {
				m := webhookSample(t)
				if tc.edit != nil {
					tc.edit(m)
				}
				raw, _ = json.Marshal(m)
			}
			_, err := answer.ParseInstallReport(raw)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) || !errors.Is(err, answer.ErrBadInstallReport) || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("error %v; want %v (and ErrBadInstallReport) saying %q", err, tc.wantErr, tc.errHas)
			}
		})
	}
}
