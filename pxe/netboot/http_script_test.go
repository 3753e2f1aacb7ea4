package netboot

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/bootassets"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/http/<name>, or rewrites it with -update.
func goldenHTTP(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "http", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", name, diff)
	}
}

const testBase = "http://10.77.0.2:8090"

// testBase6 is an IPv6 window's base URL.
const testBase6 = "http://[2001:db8:77::2]:8090"

func TestIPXEScriptMatchesGoldenFiles(t *testing.T) {
	install := BootScript{Node: "pve1", BaseURL: testBase, Release: "9.1-1", MAC: "52:54:00:77:00:10"}
	with := func(f func(*BootScript)) BootScript { s := install; f(&s); return s }
	tests := map[string]struct {
		in   BootScript
		file string
	}{
		"a BIOS script loads kernel and initrd without initrd=": {with(func(s *BootScript) { s.Platform = PlatformBIOS }), "install-bios.ipxe"},
		"a UEFI script names the initrd on the kernel line":     {with(func(s *BootScript) { s.Platform = PlatformEFI }), "install-efi.ipxe"},
		"a script for either platform branches on ${platform}":  {install, "install-any.ipxe"},
		"without a MAC the URLs carry ${net0/mac}":              {with(func(s *BootScript) { s.MAC = ""; s.Platform = PlatformEFI }), "install-no-mac.ipxe"},
		"extra kernel arguments replace the default line": {with(func(s *BootScript) {
			s.Platform = PlatformBIOS
			s.KernelArgs = defaultKernelArgs + " " + bootassets.AskDiskKernelArg + " console=ttyS0,115200"
		}), "install-args.ipxe"},
		"a consumed node exits with the reason": {BootScript{Reason: "registration pve1 was consumed at 2026-01-02T03:04:05Z: installed or installing; register it again to reinstall"}, "exit-consumed.ipxe"},
		"an unknown machine exits":              {BootScript{Reason: "no pending registration matches MAC 52:54:00:77:00:99"}, "exit-unknown.ipxe"},
		"an exit without reason says so":        {BootScript{}, "exit-no-reason.ipxe"},
		"a discovery script passes BOOTIF of the NIC iPXE booted from": {BootScript{Discovery: true, BaseURL: testBase, Release: "9.1-1", MAC: "52:54:00:77:00:99",
			KernelArgs: "plasma.discover.url=" + testBase + "/discovery plasma.discover.token=T quiet"}, "discovery-any.ipxe"},
		"a BIOS discovery script passes BOOTIF too": {BootScript{Discovery: true, BaseURL: testBase, Release: "9.1-1", Platform: PlatformBIOS,
			KernelArgs: "plasma.discover.url=" + testBase + "/discovery plasma.discover.token=T quiet"}, "discovery-bios.ipxe"},
		"an IPv6 window's URLs name it in brackets": {with(func(s *BootScript) { s.BaseURL, s.Platform = testBase6, PlatformEFI }), "install-efi-ipv6.ipxe"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) { goldenHTTP(t, tc.file, IPXEScript(tc.in)) })
	}
}

func TestIPXEScriptLinesAreIPXECommands(t *testing.T) {
	allowed := []string{"#", "echo ", "kernel ", "initrd ", "boot", "exit", "iseq ", "goto ", ":", "chain "}
	hostile := "x\nchain http://evil/\r\nshell"
	scripts := map[string]string{
		"an install script with hostile fields": IPXEScript(BootScript{Node: hostile, BaseURL: testBase, Release: "r", KernelArgs: "quiet\nshell"}),
		"an exit script with a hostile reason":  IPXEScript(BootScript{Reason: hostile}),
		"the rechain script":                    rechainScript(testBase),
	}
	for name, s := range scripts {
		t.Run(name, func(t *testing.T) {
			lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
			if lines[0] != "#!ipxe" {
				t.Errorf("first line = %q, want #!ipxe", lines[0])
			}
			for _, l := range lines[1:] {
				ok := false
				for _, p := range allowed {
					ok = ok || strings.HasPrefix(l, p)
				}
				if !ok || strings.HasPrefix(l, "chain http://evil") || l == "shell" {
					t.Errorf("line %q is not one the renderer writes", l)
				}
			}
		})
	}
}

func TestRechainScriptAsksWithMACAndPlatform(t *testing.T) {
	goldenHTTP(t, "rechain.ipxe", rechainScript(testBase+"/"))
	goldenHTTP(t, "rechain-ipv6.ipxe", rechainScript(testBase6+"/"))
}

func ExampleIPXEScript() {
	fmt.Print(IPXEScript(BootScript{
		Node:     "pve1",
		BaseURL:  "http://10.77.0.2:8090",
		Release:  "9.1-1",
		MAC:      "52:54:00:77:00:10",
		Platform: PlatformEFI,
	}))
	// Output:
	// #!ipxe
	// # plasma-node: Proxmox VE automated installer for node pve1 (release 9.1-1).
	// # The server address is concrete, not ${next-server}, which can name
	// # another host in iPXE's own DHCP round.
	// # Rendered for UEFI: initrd=initrd names the loaded initrd for the EFI stub.
	// echo plasma-node: installing Proxmox VE on pve1
	// kernel http://10.77.0.2:8090/assets/9.1-1/linux26?mac=52:54:00:77:00:10 ramdisk_size=16777216 rw quiet splash=silent proxmox-start-auto-installer initrd=initrd
	// initrd --name initrd http://10.77.0.2:8090/assets/9.1-1/initrd-netboot.img?mac=52:54:00:77:00:10
	// boot
}
