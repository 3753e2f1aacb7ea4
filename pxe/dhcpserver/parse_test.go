package dhcpserver

import (
	"net"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
)

// parseCases are packets the parser must read as dhcpv4.FromBytes does.
func parseCases(t testing.TB) map[string][]byte {
	mac := net.HardwareAddr{0x52, 0x54, 0, 0x12, 0x34, 0x56}
	disc, err := dhcpv4.NewDiscovery(mac,
		dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00007:UNDI:003016")),
		dhcpv4.WithOption(dhcpv4.OptClientArch(iana.EFI_X86_64)),
		dhcpv4.WithOption(dhcpv4.OptUserClass("iPXE")),
		dhcpv4.WithOption(dhcpv4.OptGeneric(dhcpv4.OptionClientMachineIdentifier, []byte{0, 1, 2, 3})),
		dhcpv4.WithBroadcast(true))
	if err != nil {
		t.Fatal(err)
	}
	disc.ServerHostName, disc.BootFileName = "sname", "file.efi"
	good := disc.ToBytes()
	end := len(good) - 1
	for good[end] == 0 {
		end--
	}
	with := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	return map[string][]byte{
		"a PXE DISCOVER": good,
		"an option in two pieces (RFC 3396)": with(func(b []byte) []byte {
			return append(b[:end], byte(dhcpv4.OptionClassIdentifier), 3, 'x', 'y', 'z', 255)
		}),
		"an empty option":               with(func(b []byte) []byte { return append(b[:end], 200, 0, 255) }),
		"an empty option repeated":      with(func(b []byte) []byte { return append(b[:end], 200, 0, 200, 0, 255) }),
		"an option after an empty one":  with(func(b []byte) []byte { return append(b[:end], 200, 0, 200, 1, 'a', 255) }),
		"no end option":                 with(func(b []byte) []byte { return b[:end] }),
		"a truncated option":            with(func(b []byte) []byte { return append(b[:end], 201, 9, 'a') }),
		"an option code without length": with(func(b []byte) []byte { return append(b[:end], 201) }),
		"no options at all":             with(func(b []byte) []byte { return b[:240] }),
		"a bad magic cookie":            with(func(b []byte) []byte { b[236] = 1; return b }),
		"shorter than the header":       with(func(b []byte) []byte { return b[:200] }),
		"a hardware length over 16":     with(func(b []byte) []byte { b[2] = 40; return b }),
		"pads only":                     with(func(b []byte) []byte { return append(b[:240], 0, 0, 0) }),
		"full sname and file": with(func(b []byte) []byte {
			for i := 44; i < 236; i++ {
				b[i] = 'a'
			}
			return b
		}),
	}
}

func TestParserReadsAsFromBytes(t *testing.T) {
	var p parser
	for name, pkt := range parseCases(t) {
		t.Run(name, func(t *testing.T) {
			want, wantErr := dhcpv4.FromBytes(pkt)
			got, err := p.parse(pkt)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("err = %v, FromBytes' = %v", err, wantErr)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("parse differs from FromBytes (-FromBytes +parse):\n%s", diff)
			}
		})
	}
}

func FuzzParserReadsAsFromBytes(f *testing.F) {
	for _, pkt := range parseCases(f) {
		f.Add(pkt)
	}
	var p parser
	f.Fuzz(func(t *testing.T, pkt []byte) {
		want, wantErr := dhcpv4.FromBytes(pkt)
		got, err := p.parse(pkt)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("err = %v, FromBytes' = %v", err, wantErr)
		}
		if err == nil {
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("parse differs from FromBytes (-FromBytes +parse):\n%s", diff)
			}
		}
	})
}
