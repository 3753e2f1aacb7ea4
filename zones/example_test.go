package zones_test

import (
	"errors"
	"fmt"

	"github.com/plasmactl/plasma-node/zones"
)

// Allocating a node to zones the way `node:allocate node001 ...` does.
func ExampleApply() {
	ops, err := zones.ParseOps([]string{"cognition.data", "foundation.network.ingress-", "foundation.cluster.control/foundation.cluster.nodes"})
	if err != nil {
		fmt.Println(err)
		return
	}
	current := []string{"platform.foundation.cluster.control", "platform.foundation.network.ingress"}
	result, changed, err := zones.Apply(current, ops)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(result, changed)

	_, _, err = zones.Apply(result, []zones.Op{{Kind: zones.Remove, Zone: "platform.interaction"}})
	fmt.Println(errors.Is(err, zones.ErrNotAllocated), err)
	// Output:
	// [platform.cognition.data platform.foundation.cluster.nodes] true
	// true remove platform.interaction: zone "platform.interaction" is not allocated to the node; the node has platform.cognition.data, platform.foundation.cluster.nodes
}

func ExampleParseSpec() {
	s, err := zones.ParseSpec("foundation.cluster.control:GP1-L:3")
	fmt.Println(s.Zone, s.Type, s.Count, err)
	_, err = zones.ParseSpec("foundation.cluster.control:GP1-L:0")
	fmt.Println(err)
	// Output:
	// platform.foundation.cluster.control GP1-L 3 <nil>
	// zone spec "foundation.cluster.control:GP1-L:0": count "0" must be a positive integer
}

func ExampleTopology_Check() {
	top, err := zones.ParseTopology([]byte(`
platform:
  foundation:
    - cluster:
      - control
      - nodes
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(top.Paths())
	fmt.Println(top.Check("foundation.cluster.control"))
	fmt.Println(top.Check("foundation.clster.control"))
	// Output:
	// [platform platform.foundation platform.foundation.cluster platform.foundation.cluster.control platform.foundation.cluster.nodes]
	// <nil>
	// zone "platform.foundation.clster.control" is not in topology.yaml; nearest: platform.foundation.cluster.control, platform.foundation.cluster.nodes, platform.foundation.cluster, platform.foundation, platform
}
