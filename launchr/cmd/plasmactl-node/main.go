// Command plasmactl-node is Launchr with the plasma-node plugin built in:
// `plasmactl-node node:list PLATFORM` runs the plugin's actions, the same
// as plasma-node's commands of those names. Build it with the application
// name set, as Launchr's builder does:
//
//	go build -ldflags "-X github.com/launchrctl/launchr.name=plasmactl-node" ./cmd/plasmactl-node
package main

import (
	launchrctl "github.com/launchrctl/launchr"

	// The plasma-node actions.
	_ "github.com/plasmactl/plasma-node/launchr"
)

func main() {
	launchrctl.RunAndExit()
}
