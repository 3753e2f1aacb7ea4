package badinput

import "strings"

// Value is one bad value of an input and the words every entry point's
// refusal must contain.
type Value struct {
	// Name says what is wrong with the value, as a test name.
	Name string
	// Value is the bad value as an operator would give it.
	Value string
	// Want is a part of the message every entry point gives for it.
	Want string
}

// MACs are MAC addresses that cannot be a machine's identity: not six hex
// pairs, broadcast, multicast or all zero.
func MACs() []Value {
	return []Value{
		{"the broadcast address", "ff:ff:ff:ff:ff:ff", "broadcast"},
		{"the all-zero address", "00:00:00:00:00:00", "all zero"},
		{"a multicast address", "01:00:5e:00:00:01", "multicast"},
		{"a multicast address in upper case with dashes", "33-33-00-00-00-01", "multicast"},
		{"five pairs", "aa:bb:cc:dd:ee", "six hex pairs"},
		{"a non-hex digit", "aa:bb:cc:dd:ee:gg", "six hex pairs"},
	}
}

// TTLs are window TTLs outside the bounds, as given on a command line or
// in a request: each refusal states the bounds.
func TTLs() []Value {
	const rule = "from 1s to 168h (a week)"
	return []Value{
		{"zero", "0s", rule},
		{"zero seconds", "0", rule},
		{"negative", "-1h", rule},
		{"under a second", "500ms", rule},
		{"ten years", "87600h", rule},
		{"a week and an hour", "169h", rule},
	}
}

// ListenAddrs are listen addresses (--http, --tftp, --api) that are not
// HOST:PORT with a port from 0 to 65535 and a host that is an IP address
// or a name; none may be looked up in DNS.
func ListenAddrs() []Value {
	return []Value{
		{"an IPv4 literal out of range", "999.0.0.1:8190", "999.0.0.1 is not an IP address"},
		{"a short IPv4 literal", "10.0.1:8190", "10.0.1 is not an IP address"},
		{"a port out of range", "127.0.0.1:99999", `port "99999" is not a number`},
		{"a named port", "127.0.0.1:http", `port "http" is not a number`},
		{"no port", "127.0.0.1", "no port"},
		{"a space in the host", "my host:8090", "neither an IP address nor a host name"},
		{"a bad IPv6 literal", "[::g]:8090", "::g is not an IP address"},
	}
}

// Names are new registration names that cannot be a node's host name:
// each refusal states the one rule (hostname.Rule) in the same words.
func Names() []Value {
	const rule = "want a-z, 0-9 and '-', 1 to 63 characters, no leading or trailing '-', not digits only"
	return []Value{
		{"a space", "my node", rule},
		{"an underscore", "pve_1", rule},
		{"upper case", "PVE1", rule},
		{"a leading dash", "-pve1", rule},
		{"digits only", "123", rule},
		{"64 characters", strings.Repeat("a", 64), rule},
		{"a dot", "pve1.example", rule},
		{"punctuation", "bad name!", rule},
	}
}

// Domains are domains (a platform's dns.domain, node-provisioner's site
// domain) that are not DNS domains by the one rule, hostname.DomainRule:
// each refusal states it.
func Domains() []Value {
	const rule = "want dot-separated labels of a-z, 0-9 and '-'"
	return []Value{
		{"a space and an empty label", "exa mple..com", rule},
		{"304 characters", strings.Repeat("a.", 151) + "aa", rule},
		{"a non-ASCII letter", "bücher.example", rule},
		{"upper case", "Example.com", rule},
		{"a label starting with '-'", "-x.example.com", rule},
		{"a trailing dot", "example.com.", rule},
		{"a 64-character label", strings.Repeat("a", 64) + ".example", rule},
	}
}
