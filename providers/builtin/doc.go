// Package builtin gathers the providers that ship with plasma-node
// (aws, hetzner, manual, ovh, pxe, scaleway) into a [providers.Set], the
// set a plasmanode.Project uses unless its options give another.
//
// It adds no behaviour of its own: a program with providers of its own
// makes its set with providers.NewSet, from [Providers] and its own.
package builtin
