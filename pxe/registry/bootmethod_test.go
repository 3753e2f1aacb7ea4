package registry

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/answer"
)

func TestBootMethodNeedsARedfishBMC(t *testing.T) {
	redfish := &BMC{URL: "redfish://10.0.0.5", User: "root"}
	ipmi := &BMC{URL: "ipmi://10.0.0.5", User: "admin"}
	tests := map[string]struct {
		reg  Registration
		site Site
		err  string // "" accepts
	}{
		"network needs nothing":                         {Registration{BootMethod: BootNetwork}, Site{}, ""},
		"unset boots over the network":                  {Registration{}, Site{}, ""},
		"virtual media with a Redfish BMC":              {Registration{BootMethod: BootVirtualMedia, BMC: redfish}, Site{}, ""},
		"virtual media with an IPMI BMC is refused":     {Registration{BootMethod: BootVirtualMedia, BMC: ipmi}, Site{}, "speaks ipmi, which has no virtual media"},
		"virtual media without a BMC is refused":        {Registration{BootMethod: BootVirtualMedia}, Site{}, "it has no BMC"},
		"the site's virtual media without a BMC":        {Registration{}, Site{BootMethod: BootVirtualMedia}, "the site's boot method is virtual-media"},
		"a registration's network wins over the site's": {Registration{BootMethod: BootNetwork}, Site{BootMethod: BootVirtualMedia}, ""},
		"an unknown boot method":                        {Registration{BootMethod: "usb"}, Site{}, `invalid boot method "usb": want "network" or "virtual-media"`},
		"an unknown media answer":                       {Registration{BootMethod: BootVirtualMedia, BMC: redfish, MediaAnswer: "floppy"}, Site{}, `invalid media answer "floppy": want "iso" (the answer on the node's medium), "http" (fetched from the window) or "partition"`},
		"the partition media answer with a Redfish BMC": {Registration{BootMethod: BootVirtualMedia, BMC: redfish, MediaAnswer: MediaAnswerPartition}, Site{}, ""},
		"the site's partition media answer":             {Registration{BootMethod: BootVirtualMedia, BMC: redfish}, Site{MediaAnswer: MediaAnswerPartition}, ""},
		"a media answer with the network method":        {Registration{BootMethod: BootNetwork, MediaAnswer: MediaAnswerISO}, Site{}, "boots over the network"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := tc.reg
			r.Name, r.BootDisk = "pve1", answer.BootDisk{Kind: answer.BootDiskAny}
			err := r.Validate()
			if err == nil {
				err = CheckBootMethod(r, tc.site)
			}
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidBootMethod) || !errors.Is(err, ErrInvalidRegistration) || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("got %v; want ErrInvalidBootMethod saying %q", err, tc.err)
			}
		})
	}
}

func TestBootOfTakesTheRegistrationsThenTheSites(t *testing.T) {
	tests := map[string]struct {
		reg        Registration
		site       Site
		method     BootMethod
		mediaAnswr MediaAnswer
	}{
		"nothing set":               {Registration{}, Site{}, BootNetwork, ""},
		"the site's":                {Registration{}, Site{BootMethod: BootVirtualMedia}, BootVirtualMedia, MediaAnswerISO},
		"the site's media answer":   {Registration{}, Site{BootMethod: BootVirtualMedia, MediaAnswer: MediaAnswerHTTP}, BootVirtualMedia, MediaAnswerHTTP},
		"the registration's first":  {Registration{BootMethod: BootVirtualMedia, MediaAnswer: MediaAnswerISO}, Site{BootMethod: BootNetwork, MediaAnswer: MediaAnswerHTTP}, BootVirtualMedia, MediaAnswerISO},
		"network has no media mode": {Registration{BootMethod: BootNetwork}, Site{MediaAnswer: MediaAnswerHTTP}, BootNetwork, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m, a := tc.site.BootOf(tc.reg)
			if diff := cmp.Diff([]string{string(tc.method), string(tc.mediaAnswr)}, []string{string(m), string(a)}); diff != "" {
				t.Error(diff)
			}
		})
	}
}

func TestBootMethodRoundTrips(t *testing.T) {
	r := Registration{Name: "pve1", BootDisk: answer.BootDisk{Kind: answer.BootDiskAny}, MACs: []string{"52:54:00:00:00:01"},
		BMC: &BMC{URL: "redfish://127.0.0.1:8443", User: "root"}, BootMethod: BootVirtualMedia, MediaAnswer: MediaAnswerHTTP}
	data, err := EncodeRegistration(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"boot_method": "virtual-media"`) || !strings.Contains(string(data), `"media_answer": "http"`) {
		t.Errorf("registration JSON:\n%s", data)
	}
	back, err := DecodeRegistration(data, "pve1")
	if err != nil {
		t.Fatal(err)
	}
	if back.BootMethod != r.BootMethod || back.MediaAnswer != r.MediaAnswer || len(back.Extra) != 0 {
		t.Errorf("read back %q %q, extra %v", back.BootMethod, back.MediaAnswer, back.Extra)
	}
	plain, err := EncodeRegistration(Registration{Name: "pve2", BootDisk: r.BootDisk})
	if err != nil || strings.Contains(string(plain), "boot_method") || strings.Contains(string(plain), "media_answer") {
		t.Errorf("an unset boot method is written: %s %v", plain, err)
	}
}

func TestSiteCheckRefusesAnUnknownBootMethod(t *testing.T) {
	for _, s := range []Site{{BootMethod: "pxe"}, {MediaAnswer: "cdrom"}} {
		if err := s.Check(); !errors.Is(err, ErrInvalidBootMethod) {
			t.Errorf("%+v: %v", s, err)
		}
	}
	for _, a := range []MediaAnswer{MediaAnswerISO, MediaAnswerHTTP, MediaAnswerPartition} {
		if err := (Site{BootMethod: BootVirtualMedia, MediaAnswer: a}).Check(); err != nil {
			t.Error(err)
		}
	}
}
func TestBootMethodRoundTripsAndIsChecked(t *testing.T) {
	tests := map[string]struct {
		file   string
		want   BootMethod
		err    string
		encode string
	}{
		"no boot_method is network": {file: `{"name":"n1","macs":[],"boot_disk":"any"}`, want: BootNetwork},
		"virtual-media is kept":     {file: `{"name":"n1","macs":[],"boot_disk":"any","boot_method":"virtual-media","bmc":{"url":"redfish://bmc1","user":"root"}}`, want: BootVirtualMedia, encode: `"boot_method": "virtual-media"`},
		"network is written as is":  {file: `{"name":"n1","macs":[],"boot_disk":"any","boot_method":"network"}`, want: BootNetwork, encode: `"boot_method": "network"`},
		"an unknown method is refused": {file: `{"name":"n1","macs":[],"boot_disk":"any","boot_method":"floppy"}`,
			err: `invalid boot method "floppy": want "network" or "virtual-media"`},
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
			if got, _ := (Site{}).BootOf(r); got != tc.want {
				t.Errorf("method %q; want %q", got, tc.want)
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
	for in, want := range map[string]BootMethod{"": "", "network": BootNetwork, "virtual-media": BootVirtualMedia} {
		got, err := ParseBootMethod(in)
		if err != nil || got != want {
			t.Errorf("ParseBootMethod(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseBootMethod("pxe"); err == nil || !errors.Is(err, ErrInvalidRegistration) {
		t.Errorf("ParseBootMethod(pxe) = %v; want ErrInvalidRegistration", err)
	}
}
