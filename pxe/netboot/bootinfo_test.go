package netboot

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseBootInfo(t *testing.T) {
	on, off := true, false
	tests := map[string]struct {
		body   string
		want   bootInfo
		detail string
	}{
		"Secure Boot on under UEFI":      {`{"boot-info":{"mode":"efi","secureboot":true},"fqdn":"a.b"}`, bootInfo{Mode: "efi", SecureBoot: &on}, " (efi, Secure Boot on)"},
		"Secure Boot off":                {`{"boot-info":{"mode":"efi","secureboot":false}}`, bootInfo{Mode: "efi", SecureBoot: &off}, " (efi, Secure Boot off)"},
		"BIOS":                           {`{"boot-info":{"mode":"bios","secureboot":false}}`, bootInfo{Mode: "bios", SecureBoot: &off}, " (bios, Secure Boot off)"},
		"no boot-info says nothing":      {`{"fqdn":"a.b"}`, bootInfo{}, ""},
		"an unknown mode is dropped":     {`{"boot-info":{"mode":"<script>","secureboot":true}}`, bootInfo{SecureBoot: &on}, " (Secure Boot on)"},
		"a body that is not JSON":        {`installed`, bootInfo{}, ""},
		"a secureboot of the wrong type": {`{"boot-info":{"mode":"efi","secureboot":"yes"}}`, bootInfo{}, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := parseBootInfo([]byte(tc.body))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parseBootInfo (-want +got):\n%s", diff)
			}
			if d := got.detail(); d != tc.detail {
				t.Errorf("detail %q; want %q", d, tc.detail)
			}
		})
	}
}
