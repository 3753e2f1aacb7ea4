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
// off, whatever came of the post; it reboots it instead when the window
// answers that an install-mode rule enrolled it, so that its next
// netboot installs it.
func runAgent() {
	log := slog.New(slog.NewTextHandler(os.Stdout, nil))
	next, err := agent.Run(context.Background(), agent.Options{Mount: true, Logger: log})
	switch {
	case err != nil:
		fmt.Printf("%s FAIL %v\n", agentMarker, err)
	case next == agent.NextInstall:
		fmt.Printf("%s OK install\n", agentMarker)
		fmt.Println("node-provisioner: discovery done; rebooting into the install")
		if err := agent.Reboot(); err != nil {
			fmt.Printf("node-provisioner: reboot: %v\n", err)
		}
	default:
		fmt.Printf("%s OK\n", agentMarker)
	}
	fmt.Println("node-provisioner: discovery done; powering off")
	if err := agent.PowerOff(); err != nil {
		fmt.Printf("node-provisioner: power off: %v\n", err)
	}
	select {}
}
