// Package pxe serves a provisioning window: one [Server] that runs
// proxy-DHCP ([dhcpserver.Server]: it offers boot files to PXE and
// HTTP-boot clients and leaves the site's DHCP server alone), TFTP for the
// iPXE binaries ([tftp.Server]) and HTTP for the installer, and stops all three
// by itself when its TTL runs out. [Enable] and [Disable] run a window in
// the background; [Window] is its record. [Prepare] turns a Proxmox VE
// installer ISO into boot assets without root or loop mounts.
//
// The answer logic itself lives in package answer; this package only
// listens, routes, chooses boot files and enforces the window. A program
// with answer logic of its own mounts [AnswerHandler] with its
// [AnswerFunc] instead.
package pxe
