// Command embed-pxe is a program of its own that embeds pxe.Server with
// answer logic of its own: no node-provisioner registrations, but an
// inventory keyed by MAC address (here a built-in table; in a site
// controller, a CMDB) decides each machine's host name and disk, and
// every machine is answered once. It opens a window on loopback, plays
// three installers against it (a known machine, the same one again, an
// unknown one) and prints what each got. With -serve it keeps the window
// open for real installers until its TTL runs out or it is interrupted.
package main
