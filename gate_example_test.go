package plasmanode_test

import (
	"context"
	"errors"
	"fmt"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/tofu"
)

// ExampleGate shows the confirmation policy: a plan that deletes a server
// is refused even under AutoApprove; a clean one goes through.
func ExampleGate() {
	ctx := context.Background()
	del := tofu.Summary{Deletes: []tofu.Change{{Address: "hcloud_server.demo_web_003"}}}
	_, err := plasmanode.Gate(ctx, del, plasmanode.GateOptions{Command: "provision", AutoApprove: true})
	var refused *plasmanode.PlanRefusedError
	fmt.Println(errors.Is(err, plasmanode.ErrDestructivePlan), errors.As(err, &refused) && refused.Reason == plasmanode.RefusedDestroy)
	fmt.Println(refused.ChangeLines())

	clean := tofu.Summary{Creates: []tofu.Change{{Address: "hcloud_server.demo_web_001"}}}
	ok, err := plasmanode.Gate(ctx, clean, plasmanode.GateOptions{AutoApprove: true})
	fmt.Println(ok, err)
	// Output:
	// true true
	// [hcloud_server.demo_web_003 (action: delete)]
	// true <nil>
}
