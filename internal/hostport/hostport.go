package hostport

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/plasmactl/plasma-node/internal/usage"
)

// ListenRule is what a listen address may be, as every refusal states it.
const ListenRule = "want HOST:PORT or :PORT, HOST an IP address or a host name and PORT a number from 0 to 65535, such as :8090 or 10.0.0.2:8090"

// URLRule is what a server URL's host may be, as every refusal states it.
const URLRule = "want https://HOST[:PORT], HOST an IP address or a host name and PORT a number from 1 to 65535, such as https://prov.example:8091"

// AdvertiseRule is what an address the window tells machines to dial may
// be, as every refusal of [CheckAdvertised] states it.
const AdvertiseRule = "want an address a machine reaches from its own link: an IPv4 address, a global or unique-local IPv6 address (2001:db8::2, fd00::2) or a host name; a link-local IPv6 address (fe80::/10) works only with the dialling machine's own interface as its zone, which no boot script or answer can know"

// ErrInvalid is wrapped by every refusal of this package ([Error]). It
// means bad input.
var ErrInvalid = usage.New("invalid address")

// Error is a refusal: why the address is bad and the rule it breaks. Its
// text does not repeat the address, which the caller names.
type Error struct {
	// Why says what is wrong, such as "999.0.0.1 is not an IP address".
	Why string
	// Rule is [ListenRule], [URLRule] or [AdvertiseRule].
	Rule string
}

func (e *Error) Error() string { return e.Why + " (" + e.Rule + ")" }

// Unwrap returns [ErrInvalid].
func (e *Error) Unwrap() error { return ErrInvalid }

// CheckListen checks a listen address: HOST:PORT or :PORT, the port a
// number from 0 to 65535, the host empty, an IP address or a host name.
// The error wraps [ErrInvalid] and states [ListenRule].
func CheckListen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return &Error{"no port", ListenRule}
	}
	if why := badPort(port, 0); why != "" {
		return &Error{why, ListenRule}
	}
	if host == "" {
		return nil
	}
	if why := badHost(host); why != "" {
		return &Error{why, ListenRule}
	}
	return nil
}

// CheckURLHost checks a URL's host part (url.URL.Host): HOST or
// HOST:PORT, the port from 1 to 65535. The error wraps [ErrInvalid] and
// states [URLRule].
func CheckURLHost(hostport string) error {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), ""
	}
	if port != "" {
		if why := badPort(port, 1); why != "" {
			return &Error{why, URLRule}
		}
	}
	if why := badHost(host); why != "" {
		return &Error{why, URLRule}
	}
	return nil
}

// CheckAdvertised checks the host of an address the window tells
// machines to dial (its base URL, the answer URL baked into an ISO):
// HOST without a port, an IP address (an IPv6 one with or without its
// zone) or a host name. It refuses a link-local IPv6 address
// (fe80::/10), with or without a zone: the zone names an interface of
// the host that wrote it, not of the machine that dials. The error wraps
// [ErrInvalid] and states [AdvertiseRule]; the form of host is
// [CheckURLHost]'s to check.
func CheckAdvertised(host string) error {
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if err != nil {
		return nil
	}
	if a.Is6() && !a.Is4In6() && a.IsLinkLocalUnicast() {
		return &Error{fmt.Sprintf("%s is a link-local address", host), AdvertiseRule}
	}
	return nil
}

func badPort(port string, lowest int) string {
	n, err := strconv.Atoi(port)
	if err != nil || n < lowest || n > 65535 || strings.HasPrefix(port, "+") {
		return fmt.Sprintf("port %q is not a number from %d to 65535", port, lowest)
	}
	return ""
}

// badHost says why host is neither an IP address nor a host name; a
// host of digits and dots only is an IPv4 address or nothing.
func badHost(host string) string {
	if _, err := netip.ParseAddr(host); err == nil {
		return ""
	}
	if host == "" {
		return "no host"
	}
	if strings.Contains(host, ":") || strings.Trim(host, "0123456789.") == "" {
		return fmt.Sprintf("%s is not an IP address", host)
	}
	name := strings.TrimSuffix(host, ".")
	if len(name) > 253 {
		return fmt.Sprintf("host name %q is longer than 253 characters", host)
	}
	for l := range strings.SplitSeq(name, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' || strings.ContainsFunc(l, func(r rune) bool {
			return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-')
		}) {
			return fmt.Sprintf("%q is neither an IP address nor a host name (labels of letters, digits and '-')", host)
		}
	}
	return ""
}
