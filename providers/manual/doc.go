// Package manual is the provider for machines made by hand: it has no
// infrastructure, so configuring one is refused ([providers.ErrNoInfrastructure]:
// its nodes are registered one by one), and any non-empty server id is
// accepted.
//
// It creates nothing and runs no tofu; join and destroy only edit files.
package manual
