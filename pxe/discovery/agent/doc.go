// Package agent is the discovery agent: the /init of the discovery
// initrd a discovery window boots unregistered machines into. It mounts
// proc, sys and dev, loads the kernel modules the machine's hardware
// asks for (by modalias, from modules.alias and modules.dep), collects
// the machine's NICs, DMI, CPUs, memory and disks from sysfs and procfs,
// and its BMC's address (a Redfish host interface's from SMBIOS, or an
// IPMI BMC's LAN address through /dev/ipmi0), gets an address by DHCP, posts the report once to the window with the
// window's token from the kernel command line, and powers the machine
// off.
//
// It never opens a disk for writing: disks are read through sysfs only.
// It does not decide what becomes of the report (package pxe/netboot
// takes it, package discovery keeps it).
package agent
