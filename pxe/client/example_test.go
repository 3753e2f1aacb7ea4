package client_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// Registering a machine with a daemon, opening the window and following
// the machine's boot. (Compiled, not run: it needs a daemon.)
func Example() {
	ctx := context.Background()
	c, err := client.New(client.Options{
		URL:         "https://provisioner.example:8091",
		Token:       os.Getenv("NODE_PROVISIONER_TOKEN"),
		Fingerprint: os.Getenv("NODE_PROVISIONER_FINGERPRINT"),
	})
	if err != nil {
		panic(err)
	}
	disk, _ := registry.ParseBootDisk("25414A800205")
	reg := registry.Registration{Name: "pve3", MACs: []string{"aa:bb:cc:dd:ee:ff"}, BootDisk: disk}
	if _, err := c.Register(ctx, reg, registry.RegisterOptions{}); err != nil {
		panic(err) // errors.Is(err, registry.ErrPinTaken) when another registration holds the MAC
	}
	if _, err := c.OpenWindow(ctx, 2*time.Hour); err != nil {
		panic(err) // needs an admin token
	}
	err = c.Events(ctx, client.FromNow, func(id string, e backend.Event) error {
		fmt.Println(e.Time.Format(time.TimeOnly), e.Kind, e.Node, e.Detail)
		if e.Kind == events.Installed && e.Node == "pve3" {
			return client.ErrStop
		}
		return nil
	})
	if err != nil {
		panic(err)
	}
}
