// Command embed-pxe is a program of its own that runs a whole
// provisioning window (pxe.Server: proxy-DHCP, TFTP, the iPXE script,
// assets and answers) over a backend of its own: no node-provisioner
// registrations, but an inventory keyed by MAC address (here a built-in
// table; in a site controller, a CMDB) decides which machines boot, each
// one's host name and disk, and answers every machine once. It writes no
// socket or handler code: the inventory implements backend.Backend
// (Allow, Boot, Answer) and the window does the rest.
//
// By default it opens the window on loopback, plays three installers
// against it (a known machine, the same one again, an unknown one) and
// prints what each got. With -dhcp-interface IF -state-dir DIR -serve it
// network-boots real machines on IF until its TTL runs out or it is
// interrupted; its test does that in a network-namespace pair.
package main
