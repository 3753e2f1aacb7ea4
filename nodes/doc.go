// Package nodes holds the inventory of a Plasma project: the Platform, Pool
// and Node types and the Store that reads and writes
// platforms/<platform>/platform.yaml and platforms/<platform>/nodes/<host>.yaml.
//
// Files written by plasmactl-node load unchanged, and a rewrite keeps the
// comments, key order and unknown fields of what a person wrote: the Store
// edits the YAML node tree rather than marshalling a struct over the file.
// Writes are atomic, and [Store.Lock] serialises the operations that change
// a platform. The package does not allocate addresses or check zones; see
// packages ipam and zones.
package nodes
