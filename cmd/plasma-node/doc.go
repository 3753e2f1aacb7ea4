// Command plasma-node manages the platforms and nodes of a Plasma project:
// platforms/<platform>/platform.yaml and platforms/<platform>/nodes/<host>.yaml.
//
// It does not serve installer answers; node-provisioner does that.
package main
