package nodes

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUnknownKeysAreFoundWithTheirNearest(t *testing.T) {
	tests := map[string]struct {
		yaml string
		want []UnknownKey
	}{
		"a misspelt dns key": {"name: demo\ndns:\n  domian: example.com\n",
			[]UnknownKey{{File: "platforms/demo/platform.yaml", Line: 3, Key: "dns.domian", Nearest: "dns.domain"}}},
		"a misspelt networking key": {"networking:\n  privat_network: 10.0.0.0/8\n",
			[]UnknownKey{{File: "platforms/demo/platform.yaml", Line: 2, Key: "networking.privat_network", Nearest: "networking.private_network"}}},
		"a misspelt provider": {"infrastructure:\n  metal_provder: hetzner\n",
			[]UnknownKey{{File: "platforms/demo/platform.yaml", Line: 2, Key: "infrastructure.metal_provder", Nearest: "infrastructure.metal_provider"}}},
		"a key of a pool and of an ip pool": {"pools:\n  web:\n    cout: 2\nnetworking:\n  ip_pools:\n    lan:\n      cidr: 10.0.0.0/24\n      gatway: 10.0.0.1\n",
			[]UnknownKey{
				{File: "platforms/demo/platform.yaml", Line: 3, Key: "pools.web.cout", Nearest: "pools.web.count"},
				{File: "platforms/demo/platform.yaml", Line: 8, Key: "networking.ip_pools.lan.gatway", Nearest: "networking.ip_pools.lan.gateway"},
			}},
		"a key far from any has no nearest": {"dns:\n  frobnicate: 1\n",
			[]UnknownKey{{File: "platforms/demo/platform.yaml", Line: 2, Key: "dns.frobnicate"}}},
		"unknown top-level sections belong to other plugins": {"other_plugin:\n  anything: 1\nname: demo\n", nil},
		"a top-level near miss is a misspelt section":        {"name: demo\npoolz:\n  web: {count: 1}\n", []UnknownKey{{File: "platforms/demo/platform.yaml", Line: 2, Key: "poolz", Nearest: "pools"}}},
		"networking.bus is plasmactl's":                      {"networking:\n  bus:\n    ip: 10.0.0.1\n", nil},
		"hardware machines are checked too": {"pools:\n  metal:\n    hardware:\n      - macs: [aa:bb:cc:dd:ee:ff]\n        bootdisk: sda\n",
			[]UnknownKey{{File: "platforms/demo/platform.yaml", Line: 5, Key: "pools.metal.hardware[0].bootdisk", Nearest: "pools.metal.hardware[0].boot_disk"}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "platforms/demo/nodes"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "platforms/demo/platform.yaml"), []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := Open(dir, Options{}).Platform(context.Background(), "demo")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, p.UnknownKeys()); diff != "" {
				t.Errorf("UnknownKeys (-want +got):\n%s", diff)
			}
		})
	}
}
