// Package power acts on a registered machine through its BMC: power
// status, on, off and cycle ([Node]), and a boot into the installer
// ([Boot]: the next boot PXE, once, then power on) that only a pending
// registration gets while the provisioning window is open, and a
// reinstall ([Reinstall]: re-arm an installed registration, then boot
// it). Each action is an event in the state folder's event log. [Open]
// picks the driver of an endpoint: package ipmi or bmc's Redfish. It is
// the one package that links the IPMI driver; node-provisioner's wiring
// (pxe/daemon, cmd/node-provisioner) imports it, plasma-node never does.
package power
