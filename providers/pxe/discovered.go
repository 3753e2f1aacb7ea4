package pxe

import (
	"context"
	"errors"
	"fmt"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/pxe/discovery"
)

// HardwareDiscovered, as the hardware file, takes new machines from the
// node-provisioner's discovery inbox instead of a file, oldest first.
const HardwareDiscovered = "discovered"

// ErrNoInbox is wrapped by the error of [HardwareDiscovered] when the
// registry reached lists no discovery inbox.
var ErrNoInbox = errors.New("the node-provisioner reached lists no discovered machines")

// inbox is a [Registry] that lists the discovery inbox (registrar.Local
// and the API's client are).
type inbox interface {
	Discovered(ctx context.Context) ([]discovery.Record, error)
}

// discoveredHardware returns the inbox's machines as hardware, oldest
// first: each pins its MACs, DMI serial and UUID; its boot disk is its
// only disk with a serial, else chosen on the console.
func discoveredHardware(ctx context.Context, reg Registry) ([]Hardware, error) {
	in, ok := reg.(inbox)
	if !ok {
		return nil, fmt.Errorf("provider pxe: %w", ErrNoInbox)
	}
	recs, err := in.Discovered(ctx)
	if err != nil {
		return nil, fmt.Errorf("provider pxe: discovered machines: %w", err)
	}
	out := make([]Hardware, 0, len(recs))
	for _, r := range recs {
		macs, serial, uuid := r.Pins()
		m := nodes.Machine{MACs: macs, Serial: serial, UUID: uuid}
		var withSerial []string
		for _, d := range r.Disks {
			if d.Serial != "" {
				withSerial = append(withSerial, d.Serial)
			}
		}
		if len(withSerial) == 1 {
			m.BootDisk = withSerial[0]
		}
		h := Hardware{Machine: m, Where: "discovered machine " + r.ID}
		if err := check(&h); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}
