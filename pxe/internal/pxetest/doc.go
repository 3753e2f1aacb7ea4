// Package pxetest holds the test clients of a window's UDP servers, as
// the tests of package pxe and its subpackages use them: [DHCPClient], a
// socket standing for PXE clients and relays, and [TFTPClient], a TFTP
// client speaking raw UDP, to see every packet; and [FreeUDPPort].
//
// It is for tests only: it fails the test it is given on a socket error
// and runs no server of its own.
package pxetest
