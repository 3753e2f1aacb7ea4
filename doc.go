// Package plasmanode brings up the machines under a Plasma platform: it
// holds the operations that the plasma-node and node-provisioner binaries,
// and any other Go program, call.
//
// A tour of the packages:
//
//   - [github.com/plasmactl/plasma-node/zones]: zone paths, the optional
//     topology.yaml tree, zone:type:count specs and kubectl-style
//     allocation operations. Pure functions.
//   - [github.com/plasmactl/plasma-node/ipam]: private address pools and
//     deterministic allocation against a set of used addresses.
//   - [github.com/plasmactl/plasma-node/nodes]: the Platform, Pool and Node
//     types and the Store that reads and writes platforms/<p>/platform.yaml
//     and platforms/<p>/nodes/<host>.yaml, keeping what a person wrote.
//   - [github.com/plasmactl/plasma-node/tofu]: OpenTofu (or Terraform)
//     found, configurations rendered, plans run and classified.
//   - [github.com/plasmactl/plasma-node/providers]: the Provider each
//     cloud implements and the Set a project may name; its subpackages
//     are the providers, gathered by providers/builtin into the set a
//     [Project] uses unless [Options.Providers] gives another.
//   - [github.com/plasmactl/plasma-node/answer]: the Proxmox VE automated
//     installer's answer file and system-info payload, and nothing else
//     of this module (node-provisioner's registrations are pxe/registry's).
//   - [github.com/plasmactl/plasma-node/pxe]: the provisioning window, one
//     Server running proxy-DHCP, TFTP and the netboot HTTP side behind a
//     backend seam (pxe/backend); its subpackages are those roles.
//
// This package does not print or exit: it returns results as values
// ([ProvisionResult], [DestroyResult], ...), reports a plan before it
// asks through the OnPlan callbacks, asks through the [Prompter] it is
// given, and logs through the *slog.Logger it is given. Its errors say
// what is wrong in the words of its options, not of a command line: an
// [OptionError] names the options field at fault and a
// [PlanRefusedError] the refused changes, so that a front end can name
// its own flags; [IsUsageError] tells bad input from a failure.
package plasmanode
