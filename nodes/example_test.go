package nodes_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/plasmactl/plasma-node/nodes"
)

// ExampleStore_UpdateNode adds a zone to a node a person wrote by hand: the
// comments and the field plasma-node does not know survive the rewrite.
func ExampleStore_UpdateNode() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "nodes-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	s := nodes.Open(dir, nodes.Options{})
	if err := s.CreatePlatform(ctx, &nodes.Platform{Name: "dev", Infrastructure: nodes.Infrastructure{MetalProvider: "manual"}}); err != nil {
		log.Fatal(err)
	}
	written := `# node1: the one under the desk.
hostname: node1
zones: [platform.foundation.cluster.control] # control plane
network:
  public_ip: 203.0.113.10
  private_ip: 192.168.0.10
owner: team-infra # kept as written
`
	path := s.NodePath("dev", "node1")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(written), 0o644); err != nil {
		log.Fatal(err)
	}

	_, err = s.UpdateNode(ctx, "dev", "node1", func(n *nodes.Node) error {
		n.Zones = append(n.Zones, "platform.interaction.observability")
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(data))
	// Output:
	// # node1: the one under the desk.
	// hostname: node1
	// zones: [platform.foundation.cluster.control, platform.interaction.observability] # control plane
	// network:
	//   public_ip: 203.0.113.10
	//   private_ip: 192.168.0.10
	// owner: team-infra # kept as written
}
