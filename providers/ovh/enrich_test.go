package ovh

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/providers"
)

// TestEnrichFromState maps ovh_dedicated_server state attributes (names
// of the ovh/ovh provider's ovh_dedicated_server resource,
// https://registry.terraform.io/providers/ovh/ovh/latest/docs/resources/dedicated_server)
// to node fields as the anchor's output does.
func TestEnrichFromState(t *testing.T) {
	full := map[string]any{
		"service_name": "ns1234567.ip-1-2-3.net", "ip": "51.75.1.2", "datacenter": "bhs8", "region": "ca-east-bhs",
		"display_name": "demo-web-001", "plan": []any{map[string]any{"plan_code": "24adv01", "duration": "P1M"}},
	}
	tests := map[string]struct {
		typ    string
		attrs  map[string]any
		want   providers.Server
		wantOK bool
	}{
		"a full server gives ip, datacenter, region and plan code": {typ: ResourceType, attrs: full, wantOK: true,
			want: providers.Server{ServerID: "ns1234567.ip-1-2-3.net", PublicIP: "51.75.1.2", Datacenter: "bhs8", Zone: "bhs8",
				Region: "ca-east-bhs", OfferID: "24adv01", Machine: "24adv01"}},
		"an adopted server without a plan keeps the rest": {typ: ResourceType, wantOK: true,
			attrs: map[string]any{"service_name": "ns1.ip-1-2-3.net", "ip": "1.2.3.4", "plan": []any{}},
			want:  providers.Server{ServerID: "ns1.ip-1-2-3.net", PublicIP: "1.2.3.4"}},
		"unknown values are ignored":            {typ: ResourceType, attrs: map[string]any{"service_name": "ns1.ip-1-2-3.net", "ip": nil, "plan": "x"}, wantOK: true, want: providers.Server{ServerID: "ns1.ip-1-2-3.net"}},
		"no service name is no server":          {typ: ResourceType, attrs: map[string]any{"ip": "1.2.3.4"}, want: providers.Server{PublicIP: "1.2.3.4"}},
		"another resource type is not a server": {typ: "ovh_vrack_dedicated_server_interface", attrs: full},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, ok := (&Provider{}).EnrichFromState(tc.typ, tc.attrs)
			if ok != tc.wantOK {
				t.Errorf("ok = %v, want %v", ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("server (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnrichMergesByServerID(t *testing.T) {
	servers := []providers.Server{{Hostname: "demo-web-001", ServerID: "ns1.ip-1-2-3.net", Zone: "bhs", Machine: "advance-1"}, {Hostname: "other", ServerID: "ns2.ip-1-2-3.net"}}
	state := func(yield func(string, map[string]any) bool) {
		yield(ResourceType, map[string]any{"service_name": "ns1.ip-1-2-3.net", "ip": "51.75.1.2", "datacenter": "bhs8", "region": "ca",
			"plan": []any{map[string]any{"plan_code": "24adv01"}}})
	}
	providers.Enrich(&Provider{}, servers, state)
	want := []providers.Server{
		{Hostname: "demo-web-001", ServerID: "ns1.ip-1-2-3.net", PublicIP: "51.75.1.2", Datacenter: "bhs8", Zone: "bhs8", Region: "ca", OfferID: "24adv01", Machine: "24adv01"},
		{Hostname: "other", ServerID: "ns2.ip-1-2-3.net"},
	}
	if diff := cmp.Diff(want, servers); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
}
