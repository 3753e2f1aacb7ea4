// Package sitepublish says what a site publishes so that a Proxmox VE
// installer ISO prepared without an answer URL (a generic ISO,
// bootassets.PrepareOptions.Generic) finds the window's answer URL and
// certificate fingerprint: DHCP options 250 and 251 as text for the
// site's DHCP server (dnsmasq, ISC Kea, OPNsense), or DNS TXT records
// under the search domain that server hands out; and it checks the TXT
// records a resolver returns against the window ([CheckDNS]).
//
// It configures no server and answers no DHCP: the proxy-DHCP of the
// window never answers the installer's own DHCP, which is the site's.
package sitepublish
