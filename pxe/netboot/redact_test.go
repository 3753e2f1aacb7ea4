package netboot

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// Identifiers of the machines the window-port tests register, boot and
// refuse: none may show in full on the window's port.
const (
	pinnedSerial = "SRV-PIN-000417"
	pinnedUUID   = "4c4c4544-0042-3510-8052-b4c04f4e3032"
	refusedMAC   = "52:54:00:de:ad:02"
	refusedUUID  = "bcf43ddf-6d92-4ace-b93f-76f71ffe4495"
	strangerMAC  = "52:54:00:99:00:07"
	foundMAC     = "52:54:00:99:00:08"
	foundSerial  = "DISC-SERIAL-0815"
)

// refusedAnswer is the system info of an installer the window refuses
// (not Proxmox VE) from the machine of mac.
func refusedAnswer(mac string) string {
	return fmt.Sprintf(`{"product":{"fullname":"Proxmox Backup Server","product":"pbs"},"iso":{"release":"9.2"},`+
		`"dmi":{"system":{"serial":%q,"uuid":%q}},"network_interfaces":[{"link":"enp1s0","mac":%q}]}`, pinnedSerial, refusedUUID, strings.ToUpper(mac))
}

// TestTheWindowsPortShowsNothingIdentifying: for every kind of entry
// (a pending node that booted, a refused answer from a registered MAC,
// a machine no registration matches, a discovered machine), the page,
// GET /status, GET /timeline and GET /metrics show no full MAC, serial,
// UUID or address of it.
func TestTheWindowsPortShowsNothingIdentifying(t *testing.T) {
	for name, tc := range map[string]struct {
		run  func(t *testing.T, e *bootEnv)
		full []string
	}{
		"a pending node that booted": {
			run: func(t *testing.T, e *bootEnv) {
				e.get(t, "/boot.ipxe?mac="+testMAC2)
				e.get(t, "/assets/9.1-1/linux26?mac="+testMAC2)
			},
			full: []string{testMAC2, pinnedSerial, pinnedUUID, "10.20.0.11"},
		},
		"a refused answer from a registered MAC": {
			run: func(t *testing.T, e *bootEnv) {
				if code, body := e.post(t, "/answer", "", refusedAnswer(refusedMAC)); code != 400 {
					t.Fatalf("POST /answer = %d %s, want 400", code, body)
				}
			},
			full: []string{refusedMAC, pinnedSerial, refusedUUID},
		},
		"a machine no registration matches": {
			run: func(t *testing.T, e *bootEnv) {
				e.get(t, "/boot.ipxe?mac="+strangerMAC)
				e.post(t, "/answer", "", refusedAnswer(strangerMAC))
			},
			full: []string{strangerMAC},
		},
		"a discovered machine": {
			run: func(t *testing.T, e *bootEnv) {
				e.get(t, "/boot.ipxe?mac="+foundMAC)
				if code, body := e.post(t, "/discovery", testDiscoveryToken, reportJSON(foundMAC, foundSerial)); code/100 != 2 {
					t.Fatalf("POST /discovery = %d %s", code, body)
				}
			},
			full: []string{foundMAC, foundSerial, "NV-1"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			e, _ := newDiscoveryEnv(t, 10)
			pin := testReg(t, "pve1", "sda", testMAC2)
			pin.Serial, pin.UUID = pinnedSerial, pinnedUUID
			pin.Network = &registry.Network{CIDR: "10.20.0.11/24", Gateway: "10.20.0.1", DNS: "10.20.0.1"}
			if _, err := e.reg.Put(t.Context(), pin); err != nil {
				t.Fatal(err)
			}
			if _, err := e.reg.Put(t.Context(), testReg(t, "pve2", "sda", refusedMAC)); err != nil {
				t.Fatal(err)
			}
			tc.run(t, e)
			for _, path := range []string{"/", "/status", "/timeline", "/metrics"} {
				_, body, _ := e.get(t, path)
				for _, id := range tc.full {
					for _, form := range []string{id, strings.ToUpper(id), strings.ReplaceAll(id, ":", "-")} {
						if strings.Contains(body, form) {
							t.Errorf("GET %s shows %q in full:\n%s", path, form, body)
						}
					}
				}
			}
		})
	}
}

// TestARefusalFromARegisteredMACIsOnThatNodesTimeline: a refused answer
// from a MAC a registration pins is filed on that node's timeline, not
// among the machines no registration matches, on the page and in GET
// /status.
func TestARefusalFromARegisteredMACIsOnThatNodesTimeline(t *testing.T) {
	e := newBootEnv(t, Config{}, testReg(t, "pve2", "sda", refusedMAC))
	if code, body := e.post(t, "/answer", "", refusedAnswer(refusedMAC)); code != 400 {
		t.Fatalf("POST /answer = %d %s, want 400", code, body)
	}
	_, body, _ := e.get(t, "/status")
	var rep StatusReport
	if err := json.Unmarshal([]byte(body), &rep); err != nil || len(rep.Nodes) != 1 {
		t.Fatalf("GET /status: %v\n%s", err, body)
	}
	var got []string
	for _, ev := range rep.Nodes[0].Timeline {
		got = append(got, string(ev.Stage)+" "+ev.Node+" "+ev.MAC)
	}
	if diff := cmp.Diff([]string{string(events.Answer) + " pve2 …:ad:02"}, got); diff != "" {
		t.Errorf("pve2's timeline (-want +got):\n%s", diff)
	}
	if len(rep.Unmatched) != 0 {
		t.Errorf("unmatched machines: %v, want none", rep.Unmatched)
	}
	_, page, _ := e.get(t, "/")
	if sec := sectionOf(t, page, "pve2"); !strings.Contains(sec, "answer refused (400)") {
		t.Errorf("pve2's section lacks the refusal:\n%s", sec)
	}
	if strings.Contains(page, "Other machines") {
		t.Errorf("the page lists the registered machine among the others:\n%s", page)
	}
}

// TestRedactorMasksIdentifiersInText: an event's detail keeps its words
// and loses every identifier: a known serial, MACs in any spelling,
// UUIDs and IPv4 and IPv6 addresses (with a port or a prefix); times
// and versions are no addresses.
func TestRedactorMasksIdentifiersInText(t *testing.T) {
	r := newRedactor([]backend.Node{{Name: "pve1", Serial: "SRV-PIN-000417", MACs: []string{testMAC1}}}, nil)
	for in, want := range map[string]string{
		"boot disk of SRV-PIN-000417 not found":                 "boot disk of …0417 not found",
		"no pending registration matches MAC 52:54:00:77:00:10": "no pending registration matches MAC …:00:10",
		"unparsable MAC \"52-54-00-DE-AD-02x\"":                 "unparsable MAC \"…-AD-02x\"",
		"macs 52-54-00-DE-AD-02, 52:54:00:de:ad:03":             "macs …-AD-02, …:ad:03",
		"uuid BCF43DDF-6D92-4ACE-B93F-76F71FFE4495":             "uuid …4495",
		"ipxe.efi to 10.77.0.120:1234":                          "ipxe.efi to ….120:1234",
		"from fe80::5054:ff:fe12:3456 and [2001:db8::7]:80":     "from …:3456 and […:7]:80",
		"address 192.0.2.41/24":                                 "address ….41/24",
		"installer 9.2 at 03:00:30, release 9.1-1":              "installer 9.2 at 03:00:30, release 9.1-1",
	} {
		if diff := cmp.Diff(want, r.text(in)); diff != "" {
			t.Errorf("%q (-want +got):\n%s", in, diff)
		}
	}
}

// TestRedactorMasksPinnedNICNames: an installed node's report names its
// pinned NICs by MAC; the window's port shows those MACs masked, and the
// node it was given is left as it was.
func TestRedactorMasksPinnedNICNames(t *testing.T) {
	const mac = "52:54:00:ba:5e:11"
	n := backend.Node{Install: &answer.InstallReport{NICNames: map[string]string{mac: "nic0"}}}
	got := redactor{}.node(n)
	if diff := cmp.Diff(map[string]string{maskMAC(mac): "nic0"}, got.Install.NICNames); diff != "" {
		t.Errorf("masked NIC names (-want +got):\n%s", diff)
	}
	if n.Install.NICNames[mac] != "nic0" {
		t.Errorf("the node given was changed: %v", n.Install.NICNames)
	}
}
