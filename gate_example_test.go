package plasmanode_test

import (
	"errors"
	"fmt"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/tofu"
)

// ExampleGate shows the confirmation policy: a plan that deletes a server
// is refused even under --auto-approve; a clean one goes through.
func ExampleGate() {
	del := tofu.Summary{Deletes: []tofu.Change{{Address: "hcloud_server.demo_web_003"}}}
	_, err := plasmanode.Gate(del, plasmanode.GateOptions{Command: "plasma-node provision", AutoApprove: true})
	fmt.Println(errors.Is(err, plasmanode.ErrDestructivePlan))

	clean := tofu.Summary{Creates: []tofu.Change{{Address: "hcloud_server.demo_web_001"}}}
	ok, err := plasmanode.Gate(clean, plasmanode.GateOptions{AutoApprove: true})
	fmt.Println(ok, err)
	// Output:
	// true
	// true <nil>
}
