// Package sitepublish says what a site publishes so that a Proxmox VE
// installer ISO prepared without an answer URL (a generic ISO,
// bootassets.PrepareOptions.Generic) finds the window's answer URL and
// certificate fingerprint: DHCP options 250 and 251 as text for the
// site's DHCP server (dnsmasq, ISC Kea, OPNsense), or DNS TXT records
// under the search domain that server hands out; and it checks the TXT
// records a resolver returns against the window ([CheckDNS]). On an IPv6
// segment it also writes what the site's DHCPv6 server gives iPXE, which
// takes its boot file from no other server ([IPv6Boot]).
//
// It configures no server and answers no DHCP: the proxy-DHCP of the
// window never answers the installer's own DHCP, which is the site's.
package sitepublish
