package proxydhcp

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/insomniacslk/dhcp/iana"
)

var testMAC = net.HardwareAddr{0x52, 0x54, 0x00, 0x12, 0x34, 0x56}

func testBootConfig() BootConfig {
	return BootConfig{
		HTTPBase:  "http://192.0.2.10:8090/ipxe/",
		ScriptURL: "http://192.0.2.10:8090/boot.ipxe",
	}
}

func TestSelectBoot(t *testing.T) {
	pxe := func(archs ...iana.Arch) Client {
		return Client{MAC: testMAC, Class: ClassPXE, VendorClass: "PXEClient:Arch:00000:UNDI:002001", Archs: archs}
	}
	http := func(archs ...iana.Arch) Client {
		return Client{MAC: testMAC, Class: ClassHTTP, VendorClass: "HTTPClient:Arch:00016:UNDI:003000", Archs: archs}
	}
	ipxe := func(c Client) Client { c.IPXE = true; return c }
	snp := testBootConfig()
	snp.UEFIBinary = SNPOnlyBinary
	arm := testBootConfig()
	arm.ARM64Binary = "ipxe-arm64.efi"
	sb := testBootConfig()
	sb.SecureBoot = true
	sbFor := testBootConfig()
	sbFor.SecureBootFor = func(mac net.HardwareAddr) bool { return mac.String() == testMAC.String() }
	sbSNP := snp
	sbSNP.SecureBoot = true
	sbArm := arm
	sbArm.SecureBoot = true
	sbOther := testBootConfig()
	sbOther.SecureBootFor = func(net.HardwareAddr) bool { return false }
	tests := map[string]struct {
		client Client
		cfg    BootConfig
		want   Boot
	}{
		"BIOS PXE gets undionly.kpxe": {
			client: pxe(iana.INTEL_X86PC), cfg: testBootConfig(),
			want: Boot{File: "undionly.kpxe", Class: ClassPXE, Reason: "PXE client of architecture 0 (BIOS): undionly.kpxe over TFTP"},
		},
		"UEFI x64 (7) gets ipxe.efi": {
			client: pxe(iana.EFI_X86_64), cfg: testBootConfig(),
			want: Boot{File: "ipxe.efi", Class: ClassPXE, Reason: "PXE client of architecture 7 (UEFI x86-64): ipxe.efi over TFTP"},
		},
		"UEFI x64 sending 9 also gets ipxe.efi": {
			client: pxe(iana.EFI_BC), cfg: testBootConfig(),
			want: Boot{File: "ipxe.efi", Class: ClassPXE, Reason: "PXE client of architecture 9 (UEFI x86-64): ipxe.efi over TFTP"},
		},
		"UEFI x64 gets snponly.efi when configured": {
			client: pxe(iana.EFI_X86_64), cfg: snp,
			want: Boot{File: "snponly.efi", Class: ClassPXE, Reason: "PXE client of architecture 7 (UEFI x86-64): snponly.efi over TFTP"},
		},
		"a Secure Boot window offers UEFI x64 the shim over TFTP": {
			client: pxe(iana.EFI_X86_64), cfg: sb,
			want: Boot{File: "shimx64.efi", Class: ClassPXE, Reason: "PXE client of architecture 7 (UEFI x86-64): shimx64.efi over TFTP"},
		},
		"a Secure Boot window offers HTTP boot x64 the shim's URL": {
			client: http(iana.EFI_X86_64_HTTP), cfg: sb,
			want: Boot{File: "http://192.0.2.10:8090/ipxe/shimx64.efi", Class: ClassHTTP, Reason: "HTTP boot client of architecture 16 (UEFI x86-64 HTTP): shimx64.efi over HTTP"},
		},
		"a Secure Boot window still offers BIOS undionly.kpxe": {
			client: pxe(iana.INTEL_X86PC), cfg: sb,
			want: Boot{File: "undionly.kpxe", Class: ClassPXE, Reason: "PXE client of architecture 0 (BIOS): undionly.kpxe over TFTP"},
		},
		"a machine registered for Secure Boot gets the shim": {
			client: pxe(iana.EFI_BC), cfg: sbFor,
			want: Boot{File: "shimx64.efi", Class: ClassPXE, Reason: "PXE client of architecture 9 (UEFI x86-64): shimx64.efi over TFTP"},
		},
		"a machine not registered for Secure Boot gets iPXE": {
			client: pxe(iana.EFI_X86_64), cfg: sbOther,
			want: Boot{File: "ipxe.efi", Class: ClassPXE, Reason: "PXE client of architecture 7 (UEFI x86-64): ipxe.efi over TFTP"},
		},
		"a Secure Boot window offers the shim over the configured snponly.efi": {
			client: pxe(iana.EFI_X86_64), cfg: sbSNP,
			want: Boot{File: "shimx64.efi", Class: ClassPXE, Reason: "PXE client of architecture 7 (UEFI x86-64): shimx64.efi over TFTP"},
		},
		"a Secure Boot window still offers arm64 its iPXE binary": {
			client: pxe(iana.EFI_ARM64), cfg: sbArm,
			want: Boot{File: "ipxe-arm64.efi", Class: ClassPXE, Reason: "PXE client of architecture 11 (UEFI arm64): ipxe-arm64.efi over TFTP"},
		},
		"a Secure Boot window still ignores UEFI IA32": {
			client: pxe(iana.EFI_IA32), cfg: sb,
			want: Boot{Ignore: true, Reason: "PXE client of architecture 6 (UEFI IA32), for which no iPXE binary is staged"},
		},
		"a Secure Boot window still gives iPXE its script": {
			client: ipxe(pxe(iana.EFI_X86_64)), cfg: sb,
			want: Boot{File: "http://192.0.2.10:8090/boot.ipxe?mac=52:54:00:12:34:56", Class: ClassPXE, Reason: "client already runs iPXE: its boot script"},
		},
		"a machine registered for Secure Boot booting BIOS gets undionly.kpxe": {
			client: pxe(iana.INTEL_X86PC), cfg: sbFor,
			want: Boot{File: "undionly.kpxe", Class: ClassPXE, Reason: "PXE client of architecture 0 (BIOS): undionly.kpxe over TFTP"},
		},
		"a machine registered for Secure Boot gets the shim's URL by HTTP boot": {
			client: http(iana.EFI_X86_64_HTTP), cfg: sbFor,
			want: Boot{File: "http://192.0.2.10:8090/ipxe/shimx64.efi", Class: ClassHTTP, Reason: "HTTP boot client of architecture 16 (UEFI x86-64 HTTP): shimx64.efi over HTTP"},
		},
		"only the first of several architectures counts": {
			client: pxe(iana.EFI_X86_64, iana.INTEL_X86PC), cfg: testBootConfig(),
			want: Boot{File: "ipxe.efi", Class: ClassPXE, Reason: "PXE client of architecture 7 (UEFI x86-64): ipxe.efi over TFTP"},
		},
		"UEFI arm64 gets the staged arm64 binary": {
			client: pxe(iana.EFI_ARM64), cfg: arm,
			want: Boot{File: "ipxe-arm64.efi", Class: ClassPXE, Reason: "PXE client of architecture 11 (UEFI arm64): ipxe-arm64.efi over TFTP"},
		},
		"UEFI arm64 without a staged binary is ignored": {
			client: pxe(iana.EFI_ARM64), cfg: testBootConfig(),
			want: Boot{Ignore: true, Reason: "PXE client of architecture 11 (UEFI arm64), but no arm64 iPXE binary is staged"},
		},
		"UEFI IA32 is ignored": {
			client: pxe(iana.EFI_IA32), cfg: testBootConfig(),
			want: Boot{Ignore: true, Reason: "PXE client of architecture 6 (UEFI IA32), for which no iPXE binary is staged"},
		},
		"a PXE client without architecture is ignored": {
			client: pxe(), cfg: testBootConfig(),
			want: Boot{Ignore: true, Reason: "no client architecture (option 93) sent"},
		},
		"HTTP boot x64 gets the URL of ipxe.efi": {
			client: http(iana.EFI_X86_64_HTTP), cfg: testBootConfig(),
			want: Boot{File: "http://192.0.2.10:8090/ipxe/ipxe.efi", Class: ClassHTTP, Reason: "HTTP boot client of architecture 16 (UEFI x86-64 HTTP): ipxe.efi over HTTP"},
		},
		"HTTP boot x64 gets the URL of snponly.efi when configured": {
			client: http(iana.EFI_X86_64_HTTP), cfg: snp,
			want: Boot{File: "http://192.0.2.10:8090/ipxe/snponly.efi", Class: ClassHTTP, Reason: "HTTP boot client of architecture 16 (UEFI x86-64 HTTP): snponly.efi over HTTP"},
		},
		"HTTP boot arm64 gets the arm64 URL when staged": {
			client: http(iana.EFI_ARM64_HTTP), cfg: arm,
			want: Boot{File: "http://192.0.2.10:8090/ipxe/ipxe-arm64.efi", Class: ClassHTTP, Reason: "HTTP boot client of architecture 19 (UEFI arm64 HTTP): ipxe-arm64.efi over HTTP"},
		},
		"HTTP boot arm64 without a staged binary is ignored": {
			client: http(iana.EFI_ARM64_HTTP), cfg: testBootConfig(),
			want: Boot{Ignore: true, Reason: "HTTP boot client of architecture 19 (UEFI arm64 HTTP), but no arm64 iPXE binary is staged"},
		},
		"HTTP boot without HTTPBase is ignored": {
			client: http(iana.EFI_X86_64_HTTP), cfg: BootConfig{},
			want: Boot{Ignore: true, Reason: "HTTP boot client of architecture 16 (UEFI x86-64 HTTP), but HTTP boot is not configured"},
		},
		"BIOS HTTP boot is ignored": {
			client: http(iana.INTEL_X86PC_HTTP), cfg: testBootConfig(),
			want: Boot{Ignore: true, Reason: "HTTP boot client of architecture 20 (BIOS HTTP), for which no iPXE binary is staged"},
		},
		"iPXE user class gets the script URL": {
			client: ipxe(pxe(iana.EFI_X86_64)), cfg: testBootConfig(),
			want: Boot{File: "http://192.0.2.10:8090/boot.ipxe?mac=52:54:00:12:34:56", Class: ClassPXE, Reason: "client already runs iPXE: its boot script"},
		},
		"iPXE without architecture still gets the script URL": {
			client: ipxe(pxe()), cfg: testBootConfig(),
			want: Boot{File: "http://192.0.2.10:8090/boot.ipxe?mac=52:54:00:12:34:56", Class: ClassPXE, Reason: "client already runs iPXE: its boot script"},
		},
		"the MAC joins a script URL's existing query": {
			client: ipxe(pxe(iana.INTEL_X86PC)), cfg: BootConfig{ScriptURL: "http://192.0.2.10/boot.ipxe?site=a"},
			want: Boot{File: "http://192.0.2.10/boot.ipxe?site=a&mac=52:54:00:12:34:56", Class: ClassPXE, Reason: "client already runs iPXE: its boot script"},
		},
		"iPXE without a script URL is ignored rather than looped": {
			client: ipxe(pxe(iana.EFI_X86_64)), cfg: BootConfig{},
			want: Boot{Ignore: true, Reason: "iPXE client, but no iPXE script URL is configured"},
		},
		"a client of no boot class is ignored": {
			client: Client{MAC: testMAC, VendorClass: "MSFT 5.0", Archs: []iana.Arch{iana.INTEL_X86PC}}, cfg: testBootConfig(),
			want: Boot{Ignore: true, Reason: `not a PXE or HTTP boot client (vendor class "MSFT 5.0")`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := SelectBoot(tc.client, tc.cfg)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SelectBoot (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBootConfigValidate(t *testing.T) {
	tests := map[string]struct {
		cfg     BootConfig
		wantErr string
	}{
		"the zero value is valid":       {cfg: BootConfig{}},
		"a full configuration is valid": {cfg: BootConfig{UEFIBinary: SNPOnlyBinary, ARM64Binary: "snp-arm64.efi", HTTPBase: "https://192.0.2.10/ipxe", ScriptURL: "http://192.0.2.10:8090/boot.ipxe"}},
		"a binary in a folder is refused": {
			cfg: BootConfig{UEFIBinary: "efi/ipxe.efi"}, wantErr: `UEFIBinary "efi/ipxe.efi": want a plain file name`,
		},
		"a dot-dot binary is refused": {
			cfg: BootConfig{ARM64Binary: ".."}, wantErr: `ARM64Binary "..": want a plain file name`,
		},
		"a next-server variable in the script URL is refused": {
			cfg: BootConfig{ScriptURL: "http://${next-server}:8090/boot.ipxe"}, wantErr: "ScriptURL",
		},
		"a relative script URL is refused": {
			cfg: BootConfig{ScriptURL: "/boot.ipxe"}, wantErr: `ScriptURL "/boot.ipxe": want an absolute http:// or https:// URL`,
		},
		"a tftp HTTP base is refused": {
			cfg: BootConfig{HTTPBase: "tftp://192.0.2.10/"}, wantErr: "HTTPBase",
		},
		"a script URL too long for the file field is refused": {
			cfg: BootConfig{ScriptURL: "http://192.0.2.10/" + strings.Repeat("a", 100)}, wantErr: "the BOOTP file field holds 127",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Validate = %v, want ErrInvalidConfig containing %q", err, tc.wantErr)
			}
		})
	}
}
