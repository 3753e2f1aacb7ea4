package pxe_test

import (
	"context"
	"log"
	"os/signal"
	"syscall"

	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	"github.com/plasmactl/plasma-node/pxe/store"
)

// A whole provisioning window over node-provisioner's state folder:
// proxy-DHCP and TFTP on eth0, HTTP on :8090, answers to the machines
// registered there, for two hours. The window opens no store: it asks
// the backend it is given, node-provisioner's over the folder's stores.
func ExampleServer() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	const dir = "/var/lib/node-provisioner"
	stores, err := store.Open(ctx, dir, store.Options{})
	if err != nil {
		log.Fatal(err)
	}
	b, err := regbackend.Open(ctx, stores, regbackend.Options{StateDir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	srv, err := pxe.New(pxe.Config{StateDir: dir, Backend: b, DHCPInterface: "eth0"})
	if err != nil {
		log.Fatal(err)
	}
	if err := srv.Serve(ctx); err != nil && ctx.Err() == nil {
		log.Print(err)
	}
}
