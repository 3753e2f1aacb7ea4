package discovery_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/discovery"
)

const good = `{"nics":[{"mac":"52-54-00-AA-BB-01","link":"up","speed_mbps":1000,"driver":"virtio_net"}],
"dmi":{"vendor":"QEMU","product":"Standard PC (Q35 + ICH9, 2009)","serial":"SER-1","uuid":"1e0a7c4e-3d2b-4c8a-9f00-123456789abc"},
"cpu":{"model":"QEMU Virtual CPU version 2.5+","threads":2},"memory_bytes":2147483648,
"disks":[{"name":"vda","size_bytes":8589934592,"serial":"VIRT-A","rotational":true,"transport":"virtio"},
{"name":"nvme0n1","size_bytes":4294967296,"model":"QEMU NVMe Ctrl","serial":"NVME-1","wwn":"eui.0000000000000001","rotational":false,"transport":"nvme"}]}`

func TestDecodeKeepsAReport(t *testing.T) {
	got, err := discovery.Decode(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	want := discovery.Report{
		NICs:        []discovery.NIC{{MAC: "52:54:00:aa:bb:01", Link: "up", SpeedMbps: 1000, Driver: "virtio_net"}},
		DMI:         discovery.DMI{Vendor: "QEMU", Product: "Standard PC (Q35 + ICH9, 2009)", Serial: "SER-1", UUID: "1e0a7c4e-3d2b-4c8a-9f00-123456789abc"},
		CPU:         discovery.CPU{Model: "QEMU Virtual CPU version 2.5+", Threads: 2},
		MemoryBytes: 2 << 30,
		Disks: []discovery.Disk{
			{Name: "vda", SizeBytes: 8 << 30, Serial: "VIRT-A", Rotational: true, Transport: "virtio"},
			{Name: "nvme0n1", SizeBytes: 4 << 30, Model: "QEMU NVMe Ctrl", Serial: "NVME-1", WWN: "eui.0000000000000001", Transport: "nvme"},
		},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Decode (-want +got):\n%s", d)
	}
}

// TestDecodeKeepsTheBMC: a report's BMC as the agent read it in-band
// (a Redfish host interface's service, an IPMI interface) is kept.
func TestDecodeKeepsTheBMC(t *testing.T) {
	body := strings.Replace(good, `"memory_bytes"`, `"bmc_address":"2001:db8::7","bmc_port":8443,"bmc_kind":"redfish","bmc_ipmi":"kcs","memory_bytes"`, 1)
	got, err := discovery.Decode(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	want := [4]any{"2001:db8::7", uint16(8443), discovery.BMCRedfish, "kcs"}
	if d := cmp.Diff(want, [4]any{got.BMCAddress, got.BMCPort, got.BMCKind, got.BMCIPMI}); d != "" {
		t.Errorf("Decode's BMC (-want +got):\n%s", d)
	}
}

func withNICs(n int) string {
	var b strings.Builder
	b.WriteString(`{"nics":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"mac":"02:00:00:00:%02x:%02x"}`, i>>8, i&0xff)
	}
	b.WriteString(`],"dmi":{},"cpu":{},"memory_bytes":0,"disks":[]}`)
	return b.String()
}

func withDisks(n int) string {
	var b strings.Builder
	b.WriteString(`{"nics":[{"mac":"02:00:00:00:00:01"}],"disks":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"sd%d","size_bytes":1}`, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

func TestDecodeRefuses(t *testing.T) {
	replace := func(old, new string) string { return strings.Replace(good, old, new, 1) }
	cases := map[string]struct {
		body string
		want string
	}{
		"a body over 64 KiB":         {`{"nics":[],"dmi":{"vendor":"` + strings.Repeat("x", 70<<10) + `"}}`, "larger than"},
		"not JSON":                   {"hello", "invalid character"},
		"an unknown field":           {replace(`"memory_bytes"`, `"evil":1,"memory_bytes"`), "unknown field"},
		"data after the report":      {good + "{}", "data after"},
		"no NIC":                     {`{"nics":[]}`, "no NIC"},
		"65 NICs":                    {withNICs(65), "65 NICs"},
		"129 disks":                  {withDisks(129), "129 disks"},
		"a MAC that is not one":      {replace(`52-54-00-AA-BB-01`, `52:54:00:aa:bb`), "not a MAC"},
		"a MAC twice":                {replace(`"nics":[`, `"nics":[{"mac":"52:54:00:aa:bb:01"},`), "given twice"},
		"a link state unknown":       {replace(`"link":"up"`, `"link":"sideways"`), "not a link state"},
		"a driver with a slash":      {replace(`virtio_net`, `../x`), "not a driver"},
		"a control character":        {replace(`SER-1`, `SER\u001b[2J`), "not printable"},
		"a serial of 200 bytes":      {replace(`SER-1`, strings.Repeat("9", 200)), "longer than"},
		"a UUID that is not one":     {replace(`1e0a7c4e-3d2b-4c8a-9f00-123456789abc`, `xyz`), "not a UUID"},
		"a disk name with a slash":   {replace(`"name":"vda"`, `"name":"../sda"`), "not a kernel disk name"},
		"a disk twice":               {replace(`"name":"nvme0n1"`, `"name":"vda"`), "given twice"},
		"a transport of odd form":    {replace(`"transport":"nvme"`, `"transport":"NV ME"`), "not a transport"},
		"a negative size":            {replace(`8589934592`, `-1`), "cannot unmarshal"},
		"a serial padded by spaces":  {replace(`"VIRT-A"`, `" VIRT-A"`), "surrounding space"},
		"a BMC address with a zone":  {replace(`"memory_bytes"`, `"bmc_address":"fe80::1%eth0","memory_bytes"`), "not an IP address"},
		"a BMC port without address": {replace(`"memory_bytes"`, `"bmc_port":443,"memory_bytes"`), "without a bmc_address"},
		"a BMC kind without address": {replace(`"memory_bytes"`, `"bmc_kind":"redfish","memory_bytes"`), "without a bmc_address"},
		"a BMC kind unknown":         {replace(`"memory_bytes"`, `"bmc_address":"192.0.2.9","bmc_kind":"ilo","memory_bytes"`), `bmc_kind "ilo"`},
		"an IPMI interface unknown":  {replace(`"memory_bytes"`, `"bmc_ipmi":"usb","memory_bytes"`), `bmc_ipmi "usb"`},
		"a BMC port out of range":    {replace(`"memory_bytes"`, `"bmc_address":"192.0.2.9","bmc_port":70000,"memory_bytes"`), "cannot unmarshal"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := discovery.Decode(strings.NewReader(tc.body))
			if !errors.Is(err, discovery.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Decode: %v, want ErrInvalid saying %q", err, tc.want)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte(withNICs(3)))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := discovery.Decode(bytes.NewReader(data))
		if err != nil {
			return
		}
		again, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := discovery.Decode(bytes.NewReader(again))
		if err != nil {
			t.Fatalf("a decoded report does not decode again: %v\n%s", err, again)
		}
		if d := cmp.Diff(r, r2); d != "" {
			t.Errorf("round trip (-first +second):\n%s", d)
		}
	})
}

func TestFind(t *testing.T) {
	now := time.Now()
	a, _ := discovery.Decode(strings.NewReader(good))
	b := a
	b.NICs = []discovery.NIC{{MAC: "52:54:00:aa:bb:02"}}
	b.DMI.Serial = "SER-1"
	recs := []discovery.Record{
		{ID: "52:54:00:aa:bb:01", Report: a, FirstSeen: now},
		{ID: "52:54:00:aa:bb:02", Report: b, FirstSeen: now},
	}
	cases := map[string]struct {
		key     string
		want    string
		wantErr error
	}{
		"a MAC in capitals with dashes": {"52-54-00-AA-BB-02", "52:54:00:aa:bb:02", nil},
		"an ID":                         {"52:54:00:aa:bb:01", "52:54:00:aa:bb:01", nil},
		"a serial two machines hold":    {"SER-1", "", discovery.ErrAmbiguous},
		"an unknown serial":             {"nope", "", discovery.ErrNotFound},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := discovery.Find(recs, tc.key)
			if !errors.Is(err, tc.wantErr) || got.ID != tc.want {
				t.Errorf("Find(%q) = %q, %v; want %q, %v", tc.key, got.ID, err, tc.want, tc.wantErr)
			}
		})
	}
}
