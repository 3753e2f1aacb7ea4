// Package ovh is the OVHcloud provider for dedicated servers, as
// plasmactl-node does it: pools become ovh_dedicated_server resources of
// the ovh/ovh plugin (ordered by plan code), adopted servers are imported
// by service name (nsNNN.ip-a-b-c.net or .eu) with every argument but
// display_name ignored (so adopting never reinstalls, and the node's
// hostname is written back as the display name), and each server's
// public and vRack MACs and disks are read through the plugin's
// ovh_dedicated_server and ovh_dedicated_server_specifications_hardware
// data sources into the servers output.
//
// It calls no API itself: tofu and the plugin do the calls.
package ovh
