package registry

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/answer"
)

func TestBMCValidate(t *testing.T) {
	tests := []struct {
		name string
		b    BMC
		err  string
	}{
		{"ipmi", BMC{URL: "ipmi://10.0.0.5", User: "admin"}, ""},
		{"ipmi suite 17 admin", BMC{URL: "ipmi://10.0.0.5:623", User: "admin", CipherSuite: 17, Privilege: "administrator"}, ""},
		{"redfish pinned", BMC{URL: "redfish://bmc/System.Embedded.1", User: "root", Fingerprint: strings.Repeat("AB:", 31) + "AB", Session: true, BootMode: "legacy"}, ""},
		{"no user", BMC{URL: "ipmi://10.0.0.5"}, "the user is empty"},
		{"bad URL", BMC{URL: "http://bmc", User: "u"}, `scheme "http"`},
		{"suite 4", BMC{URL: "ipmi://bmc", User: "u", CipherSuite: 4}, "cipher suite 4"},
		{"privilege user", BMC{URL: "ipmi://bmc", User: "u", Privilege: "user"}, "privilege"},
		{"fingerprint on ipmi", BMC{URL: "ipmi://bmc", User: "u", Fingerprint: "ab"}, "Redfish settings"},
		{"suite on redfish", BMC{URL: "redfish://bmc", User: "u", CipherSuite: 3}, "IPMI settings"},
		{"bad fingerprint", BMC{URL: "redfish://bmc", User: "u", Fingerprint: "zz"}, "fingerprint"},
		{"bad mode", BMC{URL: "redfish://bmc", User: "u", BootMode: "floppy"}, "boot mode"},
	}
	for _, tc := range tests {
		err := tc.b.Validate()
		if tc.err == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if !errors.Is(err, ErrInvalidBMC) || !errors.Is(err, ErrInvalidRegistration) || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v; want ErrInvalidBMC with %q", tc.name, err, tc.err)
		}
	}
}

func TestBMCRoundTripsWithoutPassword(t *testing.T) {
	r := Registration{Name: "pve1", MACs: []string{"52:54:00:00:00:01"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskAny, Value: "any"},
		BMC: &BMC{URL: "ipmi://127.0.0.1:6230", User: "admin", CipherSuite: 3}}
	data, err := EncodeRegistration(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"bmc": {`) || strings.Contains(string(data), "password") {
		t.Errorf("registration JSON:\n%s", data)
	}
	back, err := DecodeRegistration(data, "pve1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r.BMC, back.BMC); diff != "" {
		t.Errorf("BMC (-want +got):\n%s", diff)
	}
	bad := strings.Replace(string(data), `"ipmi://127.0.0.1:6230"`, `"ipmi://127.0.0.1:0"`, 1)
	if _, err := DecodeRegistration([]byte(bad), "pve1"); !errors.Is(err, ErrInvalidBMC) {
		t.Errorf("a bad BMC in a file: %v", err)
	}
}
