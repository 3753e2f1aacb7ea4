// Package dhcpserver runs a proxy-DHCP server for network boot: [Server]
// listens on UDP ports 67 and 4011 ([Listen] opens them bound to one
// interface), answers PXE and UEFI HTTP boot clients with
// [proxydhcp.Reply]'s offers and ACKs, keeps its logging within a budget
// under a storm of clients, and reports what it did through
// [Server.OnEvent].
//
// It leases no addresses and decides nothing itself: the site's DHCP
// server keeps leasing, package proxydhcp builds every reply, and the
// caller says which machines are served ([Server.Allow]).
package dhcpserver
