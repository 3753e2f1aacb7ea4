// Package launchr is the plasmactl (Launchr) plugin of plasma-node: it
// registers the actions node:add, node:allocate, node:list, node:show,
// node:provision, node:join and node:destroy, whose arguments and options
// are those of the plasma-node commands of the same names, and which run
// the same code (package plasmanode through internal/nodecmd), so they
// print the same messages and exit with the same codes (2 bad input, 1
// failure).
//
// It keeps no state and adds no configuration: the project is the current
// folder (or --dir, or PLASMA_NODE_DIR), credentials come from the
// providers' environment variables or platform.yaml as for plasma-node.
// Import it for its side effect into a Launchr build; cmd/plasmactl-node
// is such a build.
package launchr
