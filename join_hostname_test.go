package plasmanode

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	tfjson "github.com/hashicorp/terraform-json"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/providers/hetzner"
	"github.com/plasmactl/plasma-node/providers/ovh"
	"github.com/plasmactl/plasma-node/providers/scaleway"
	"github.com/plasmactl/plasma-node/tofu"
)

// importPlan is the plan of importing id, whose prior state has attrs.
func importPlan(id string, attrs map[string]any) *tfjson.Plan {
	return &tfjson.Plan{ResourceChanges: []*tfjson.ResourceChange{{
		Change: &tfjson.Change{Importing: &tfjson.Importing{ID: id}, Before: attrs},
	}}}
}

func TestJoinHostnameWithoutTheOption(t *testing.T) {
	const ovhID, scwID = "ns5009999.ip-147-135-1.net", "fr-par-2/11111111-2222-3333-4444-555555555555"
	taken := []*nodes.Node{{Hostname: "web-1"}, {Hostname: "ns5009999"}}
	tests := map[string]struct {
		prov      providers.Provider
		id        string
		before    map[string]any
		ns        []*nodes.Node
		want      string
		wantProbe string
		wantErr   error
	}{
		"an OVH display name that is a label names the node": {
			prov: &ovh.Provider{}, id: ovhID, before: map[string]any{"display_name": "db-1"}, want: "db-1", wantProbe: "ns5009999"},
		"an OVH display name that is no label gives the service name's first label": {
			prov: &ovh.Provider{}, id: ovhID, before: map[string]any{"display_name": "My Server"}, want: "ns5009999", wantProbe: "ns5009999"},
		"an OVH .eu service name derives likewise": {
			prov: &ovh.Provider{}, id: "ns1234567.ip-1-2-3.eu", before: map[string]any{"display_name": ""}, want: "ns1234567", wantProbe: "ns1234567"},
		"a derived name another node has needs the option, probed under a free name": {
			prov: &ovh.Provider{}, id: ovhID, ns: taken, want: "", wantProbe: joinProbe, wantErr: nodes.ErrExists},
		"a display name another node has needs the option": {
			prov: &ovh.Provider{}, id: ovhID, before: map[string]any{"display_name": "web-1"}, ns: taken, wantProbe: joinProbe, wantErr: nodes.ErrExists},
		"a Scaleway name that is a label names the node": {
			prov: &scaleway.Provider{}, id: scwID, before: map[string]any{"name": "em-1"}, want: "em-1", wantProbe: "fr-par-2-11111111"},
		"a Scaleway name that is no label gives zone and uuid head": {
			prov: &scaleway.Provider{}, id: scwID, before: map[string]any{"name": "EM_1"}, want: "fr-par-2-11111111", wantProbe: "fr-par-2-11111111"},
		"a Hetzner name that is no label gives the id": {
			prov: &hetzner.Provider{}, id: "4711", before: map[string]any{"name": "Not_A_Label"}, want: "4711", wantProbe: "4711"},
		"a Hetzner name that is a label names the node": {
			prov: &hetzner.Provider{}, id: "4711", before: map[string]any{"name": "handmade"}, want: "handmade", wantProbe: "4711"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			run := &tofuRun{}
			var probes []string
			planFor := func(h string) (*tofu.SavedPlan, tofu.Summary, error) {
				probes = append(probes, h)
				run.last = importPlan(tc.id, tc.before)
				return nil, tofu.Summary{}, nil
			}
			got, err := JoinOptions{ServerID: tc.id}.hostname(run, tc.prov, planFor, tc.ns)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("hostname() error = %v, want %v", err, tc.wantErr)
			}
			var need *OptionNeededError
			if tc.wantErr != nil && (!errors.As(err, &need) || need.Field != "Hostname") {
				t.Errorf("hostname() error = %#v, want an OptionNeededError for Hostname", err)
			}
			if diff := cmp.Diff(struct {
				Host   string
				Probes []string
			}{tc.want, []string{tc.wantProbe}}, struct {
				Host   string
				Probes []string
			}{got, probes}); diff != "" {
				t.Errorf("hostname and first plans (-want +got):\n%s", diff)
			}
		})
	}
}
