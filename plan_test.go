package plasmanode

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/tofu"
)

// TestSummaryPlan: tofu's classified plan and a Direct provider's fill
// the same Plan as the offline path: each change named by its node (by
// server id, else by its resource's slot), with its pool and machine.
func TestSummaryPlan(t *testing.T) {
	plat := &nodes.Platform{Name: "demo", Infrastructure: nodes.Infrastructure{MetalProvider: "hetzner"}}
	pools := map[string]nodes.Pool{"web": {Zones: []string{"platform.web"}, Machine: "cx22", Count: 2}}
	in := providers.Input{Platform: plat, Pools: pools, Existing: []providers.Existing{{Pool: "web", Index: 0, Hostname: "front", ServerID: "11"}}}
	existing := []*nodes.Node{{Hostname: "front", ProviderMetadata: nodes.ProviderMetadata{ServerID: "11"}}}
	tests := map[string]struct {
		src  PlanSource
		sum  tofu.Summary
		want []PlanChange
	}{
		"an import, a create and a destructive update of tofu's": {src: SourceTofu, sum: tofu.Summary{
			Imports:            []tofu.Change{{Address: "hcloud_server.demo_web_001", ImportID: "11"}},
			Creates:            []tofu.Change{{Address: "hcloud_server.demo_web_002"}},
			DestructiveUpdates: []tofu.Change{{Address: "hcloud_server.demo_web_001", ImportID: "11", ChangedAttrs: []string{"image", "name"}, DestructiveAttrs: []string{"image"}}},
		}, want: []PlanChange{
			{Action: ActionCreate, Object: ObjectServer, Node: "demo-web-002", Pool: "web", Machine: "cx22", Resource: "hcloud_server.demo_web_002"},
			{Action: ActionAdopt, Object: ObjectServer, Node: "front", Pool: "web", Machine: "cx22", ServerID: "11", Resource: "hcloud_server.demo_web_001"},
			{Action: ActionDestructiveUpdate, Object: ObjectServer, Node: "front", Pool: "web", Machine: "cx22", ServerID: "11", Resource: "hcloud_server.demo_web_001", Attributes: []string{"image"}},
		}},
		"a delete of a server no slot has is named by its resource": {src: SourceTofu, sum: tofu.Summary{
			Deletes: []tofu.Change{{Address: "hcloud_server.demo_web_009"}},
		}, want: []PlanChange{
			{Action: ActionDelete, Object: ObjectServer, Node: "demo-web-009", Resource: "hcloud_server.demo_web_009"},
		}},
		"a Direct provider's create keeps its note as the detail": {src: SourceProvider, sum: tofu.Summary{
			Creates: []tofu.Change{{Address: "pxe_machine.demo-web-002 (mac 52:54:00:00:00:01; boot disk sda)"}},
		}, want: []PlanChange{
			{Action: ActionCreate, Object: ObjectServer, Node: "demo-web-002", Pool: "web", Machine: "cx22", Detail: "mac 52:54:00:00:00:01; boot disk sda"},
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := summaryPlan(OpProvision, tc.src, tc.sum, in, existing)
			if got.APIVersion != PlanAPIVersion || got.Kind != PlanKind || got.Source != tc.src || got.Provider != "hetzner" {
				t.Errorf("header %+v", got)
			}
			if diff := cmp.Diff(tc.want, got.Changes); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
		})
	}
}
