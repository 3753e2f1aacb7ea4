package pxe_test

import (
	"context"
	"log"
	"os/signal"
	"syscall"

	"github.com/plasmactl/plasma-node/pxe"
)

// A whole provisioning window over node-provisioner's state folder:
// proxy-DHCP and TFTP on eth0, HTTP on :8090, answers to the machines
// registered there, for two hours.
func ExampleServer() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	srv, err := pxe.New(pxe.Config{StateDir: "/var/lib/node-provisioner", DHCPInterface: "eth0"})
	if err != nil {
		log.Fatal(err)
	}
	if err := srv.Serve(ctx); err != nil && ctx.Err() == nil {
		log.Print(err)
	}
}
