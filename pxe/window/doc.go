// Package window holds the provisioning window's state: the record a
// serving window keeps ([Record]), the lock that gives one state folder
// one window at a time ([Lock], [HeldError], [ErrOpen]), and the [Store]
// interface they sit behind, with [Dir], the state folder's
// implementation.
//
// It links no server: clients such as pxe/client and the pxe provider
// read window states and match its errors without the DHCP, TFTP and
// HTTP servers of package pxe.
package window
