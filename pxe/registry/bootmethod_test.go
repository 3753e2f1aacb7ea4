package registry

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBootMethodRoundTripsAndIsChecked(t *testing.T) {
	tests := map[string]struct {
		file   string
		want   BootMethod
		err    string
		encode string
	}{
		"no boot_method is network": {file: `{"name":"n1","macs":[],"boot_disk":"any"}`, want: BootNetwork},
		"virtual-media is kept":     {file: `{"name":"n1","macs":[],"boot_disk":"any","boot_method":"virtual-media"}`, want: BootVirtualMedia, encode: `"boot_method": "virtual-media"`},
		"network is written as is":  {file: `{"name":"n1","macs":[],"boot_disk":"any","boot_method":"network"}`, want: BootNetwork, encode: `"boot_method": "network"`},
		"an unknown method is refused": {file: `{"name":"n1","macs":[],"boot_disk":"any","boot_method":"floppy"}`,
			err: `boot method "floppy" (want network or virtual-media)`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r, err := DecodeRegistration([]byte(tc.file), "")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrInvalidRegistration) {
					t.Fatalf("err %v; want ErrInvalidRegistration saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, r.Method()); diff != "" {
				t.Errorf("method (-want +got):\n%s", diff)
			}
			b, err := EncodeRegistration(r)
			if err != nil {
				t.Fatal(err)
			}
			if tc.encode != "" && !strings.Contains(string(b), tc.encode) {
				t.Errorf("encoded file lacks %s:\n%s", tc.encode, b)
			}
			if tc.encode == "" && strings.Contains(string(b), "boot_method") {
				t.Errorf("encoded file names a boot method it was not given:\n%s", b)
			}
		})
	}
}

func TestParseBootMethod(t *testing.T) {
	for in, want := range map[string]BootMethod{"": BootNetwork, "network": BootNetwork, "virtual-media": BootVirtualMedia} {
		got, err := ParseBootMethod(in)
		if err != nil || got != want {
			t.Errorf("ParseBootMethod(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseBootMethod("pxe"); err == nil || !errors.Is(err, ErrInvalidRegistration) {
		t.Errorf("ParseBootMethod(pxe) = %v; want ErrInvalidRegistration", err)
	}
}
