package builtin

import (
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/providers/aws"
	"github.com/plasmactl/plasma-node/providers/hetzner"
	"github.com/plasmactl/plasma-node/providers/manual"
	"github.com/plasmactl/plasma-node/providers/ovh"
	"github.com/plasmactl/plasma-node/providers/pxe"
	"github.com/plasmactl/plasma-node/providers/scaleway"
)

// Providers returns a new slice of the built-in providers, sorted by
// name: aws, hetzner, manual, ovh, pxe, scaleway.
func Providers() []providers.Provider {
	return []providers.Provider{&aws.Provider{}, &hetzner.Provider{}, &manual.Provider{}, &ovh.Provider{}, &pxe.Provider{}, &scaleway.Provider{}}
}

// Set returns the set of the built-in providers, the one a
// plasmanode.Project uses when its options name none.
func Set() *providers.Set {
	s, err := providers.NewSet(Providers()...)
	if err != nil {
		// The list above has distinct, non-empty names: this is a bug.
		panic("builtin providers: " + err.Error())
	}
	return s
}
