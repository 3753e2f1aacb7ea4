//go:build linux

package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/plasmactl/plasma-node/pxe/discovery/agent"
)

// agentMarker starts the discovery agent's last line on the console.
const agentMarker = "PLASMA-DISCOVERY:"

// runAgent is node-provisioner as the discovery initrd's /init (PID 1):
// it discovers the machine, posts its report to the window and powers it
// off, whatever came of the post.
func runAgent() {
	log := slog.New(slog.NewTextHandler(os.Stdout, nil))
	err := agent.Run(context.Background(), agent.Options{Mount: true, Logger: log})
	if err != nil {
		fmt.Printf("%s FAIL %v\n", agentMarker, err)
	} else {
		fmt.Printf("%s OK\n", agentMarker)
	}
	fmt.Println("node-provisioner: discovery done; powering off")
	if err := agent.PowerOff(); err != nil {
		fmt.Printf("node-provisioner: power off: %v\n", err)
	}
	select {}
}
