// Package ovh is the OVHcloud provider for dedicated servers, as
// plasmactl-node does it: pools become ovh_dedicated_server resources of
// the ovh/ovh plugin (ordered by plan code), adopted servers are imported
// by service name (nsNNN.ip-a-b-c.net) and left alone
// (ignore_changes = all, prevent_install_on_import).
//
// It calls no API itself and fetches no metadata (MACs, disks): tofu and
// the plugin do the calls.
package ovh
