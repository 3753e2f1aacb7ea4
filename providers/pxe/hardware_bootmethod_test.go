package pxe

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// TestHardwareBootSettings: a hardware list machine's boot_method
// (network or virtual-media; unset, the site's), media_answer and its
// bmc's media_tls go into its registration. Refused, naming the file
// and line and why, as a registration refuses them: virtual-media for
// a machine without a BMC or with an IPMI one, media_tls on an IPMI
// BMC, media_answer or media_tls with boot_method network, and unknown
// values.
func TestHardwareBootSettings(t *testing.T) {
	const (
		head = "machines:\n  - macs: [52:54:00:00:00:01]\n    boot_disk: any\n"
		rf   = "    bmc:\n      url: redfish://10.0.0.5\n      user: root\n      password_env: PW\n"
		ipmi = "    bmc:\n      url: ipmi://10.0.0.5\n      user: admin\n      password_env: PW\n"
		vm   = "    boot_method: virtual-media\n"
		why  = "hw.yaml:2: invalid hardware list: boot_method virtual-media needs a Redfish BMC (bmc.url redfish://…), which lends the machine the installer's medium; "
	)
	redfish := func(tls bool) *registry.BMC {
		return &registry.BMC{URL: "redfish://10.0.0.5", User: "root", MediaTLS: tls}
	}
	tests := map[string]struct {
		in   string
		want registry.Registration // its BootMethod, MediaAnswer and BMC
		err  string
	}{
		"virtual media behind Redfish": {in: head + vm + rf, want: registry.Registration{BootMethod: registry.BootVirtualMedia, BMC: redfish(false)}},
		"network":                      {in: head + "    boot_method: network\n", want: registry.Registration{BootMethod: registry.BootNetwork}},
		"none said":                    {in: head},
		"media answer http and media_tls": {in: head + vm + "    media_answer: http\n" + rf + "      media_tls: true\n",
			want: registry.Registration{BootMethod: registry.BootVirtualMedia, MediaAnswer: registry.MediaAnswerHTTP, BMC: redfish(true)}},
		"both left to the site": {in: head + "    media_answer: iso\n" + rf + "      media_tls: true\n",
			want: registry.Registration{MediaAnswer: registry.MediaAnswerISO, BMC: redfish(true)}},
		"an unknown method":           {in: head + "    boot_method: usb\n", err: `hw.yaml:2: invalid hardware list: boot_method: invalid boot method "usb": want "network" or "virtual-media"`},
		"virtual media without a BMC": {in: head + vm, err: why + "this machine has no bmc"},
		"virtual media behind IPMI":   {in: head + vm + ipmi, err: why + "IPMI has no virtual media"},
		"media_tls on an IPMI BMC": {in: head + ipmi + "      media_tls: true\n",
			err: "hw.yaml:5: invalid hardware list: bmc: BMC ipmi://10.0.0.5: media_tls is for virtual media, which ipmi has not: give a redfish:// BMC, or turn media_tls off"},
		"media_tls booting over the network": {in: head + "    boot_method: network\n" + rf + "      media_tls: true\n",
			err: "hw.yaml:2: invalid hardware list: bmc.media_tls is for boot_method virtual-media, and this machine's boot_method is network"},
		"a media answer booting over the network": {in: head + "    boot_method: network\n    media_answer: iso\n",
			err: "hw.yaml:2: invalid hardware list: media_answer iso is for boot_method virtual-media, and this machine's boot_method is network"},
		"an unknown media answer": {in: head + vm + "    media_answer: floppy\n" + rf,
			err: `hw.yaml:2: invalid hardware list: media_answer: invalid media answer "floppy": want "iso"`},
		"media_tls not a boolean": {in: head + rf + "      media_tls: yes please\n", err: "line 8: cannot unmarshal !!str `yes please` into bool"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := ParseHardware("hw.yaml", []byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrInvalidHardware) {
					t.Fatalf("err %v\nwant ErrInvalidHardware with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			in := input(t, dir, 1)
			os.WriteFile(in.HardwareFile, []byte(tc.in), 0o644)
			r := applied(t, &Provider{Getenv: func(string) string { return "pw" }}, in, "metal-control-001")
			got := registry.Registration{BootMethod: r.BootMethod, MediaAnswer: r.MediaAnswer, BMC: r.BMC}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("the registration (-want +got):\n%s", diff)
			}
		})
	}
}

// applied plans and applies in with pv and returns the registration of
// node name in in's state folder.
func applied(t *testing.T, pv *Provider, in providers.DirectInput, name string) registry.Registration {
	t.Helper()
	ctx := context.Background()
	p, err := pv.Plan(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Apply(ctx); err != nil {
		t.Fatal(err)
	}
	g, _ := folder.OpenRegistrations(in.Location.Dir, nil)
	r, err := g.Get(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPoolHardwareBootSettingsAreChecked: a machine of a pool's own
// hardware list in platform.yaml has its boot_method and media_answer
// checked as a hardware file's are, naming the pool and index, rather
// than silently left to the site.
func TestPoolHardwareBootSettingsAreChecked(t *testing.T) {
	for _, tc := range []struct {
		m    nodes.Machine
		want string
	}{
		{nodes.Machine{BootMethod: "usb"}, `platform.yaml pools.control.hardware[0]: invalid hardware list: boot_method: invalid boot method "usb"`},
		{nodes.Machine{BootMethod: "network", MediaAnswer: "http"}, "platform.yaml pools.control.hardware[0]: invalid hardware list: media_answer http is for boot_method virtual-media"},
		{nodes.Machine{BootMethod: "virtual-media", MediaAnswer: "iso"}, "platform.yaml pools.control.hardware[0]: invalid hardware list: boot_method virtual-media needs a Redfish BMC"},
	} {
		m, want := tc.m, tc.want
		in := input(t, t.TempDir(), 1)
		m.MACs, m.BootDisk = []string{"52:54:00:00:00:09"}, "any"
		pool := in.Pools["control"]
		pool.Hardware = []nodes.Machine{m}
		in.Pools["control"] = pool
		_, err := (&Provider{}).Plan(context.Background(), in)
		if !errors.Is(err, ErrInvalidHardware) || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v\nwant ErrInvalidHardware saying %q", m, err, want)
		}
	}
}
