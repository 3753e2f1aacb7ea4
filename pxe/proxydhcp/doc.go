// Package proxydhcp is the pure encoding of a proxy-DHCP server for
// network boot: [Reply] reads a DHCPv4 request from a PXE or UEFI HTTP
// boot client and builds the offer or ACK that names this server and the
// boot file for the client's architecture ([SelectBoot]), without
// offering an address, so that the site's DHCP server keeps leasing them.
// [Decide] and [AppendReply] are the same answer in two steps, for a
// server's hot path. [Reply6] is the DHCPv6 counterpart: the Advertise
// and Reply a second responder beside the site's DHCPv6 server sends, which
// UEFI firmware takes its boot file URL (option 59) from.
//
// It does no I/O: no sockets, no files, no logging. Package dhcpserver
// serves these replies on UDP ports 67 and 4011 (547 and 4011 for DHCPv6), as insomniacslk/dhcp's
// server4 serves dhcpv4.
package proxydhcp
