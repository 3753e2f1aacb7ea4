package vmedia

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMediaRequestsAreTwoLevelInAnIPv6Slash64: each BMC address of a /64
// has its own MaxPerSource requests at once (3 here), and the /64 as a
// whole source.PrefixShare times that (24): 20 BMCs of one management
// segment each fetch at once, one address is held at its own 3, and
// 1 000 addresses of the /64 get no more than the /64's 24; another /64
// and an IPv4 address have their own (an IPv4-mapped peer is its IPv4
// address).
func TestMediaRequestsAreTwoLevelInAnIPv6Slash64(t *testing.T) {
	h := &Handler{cfg: Config{MaxPerSource: 3}}
	entered := func(remotes ...string) int {
		n := 0
		for _, r := range remotes {
			if _, a := clientOf(r); h.enter(a) {
				n++
			}
		}
		return n
	}
	many := func(format string, n int) []string {
		var rs []string
		for i := range n {
			rs = append(rs, fmt.Sprintf(format, i+1))
		}
		return rs
	}
	got := []int{
		entered(many("[2001:db8:1:2::%x]:1", 20)...),
		entered("[2001:db8:1:2::1]:1", "[2001:db8:1:2::1]:1", "[2001:db8:1:2::1]:1"),
		entered(many("[2001:db8:1:2::1:%x]:1", 1000)...),
		entered("[2001:db8:1:3::1]:1", "192.0.2.7:1", "[::ffff:192.0.2.7]:1", "192.0.2.7:1"),
	}
	if diff := cmp.Diff([]int{20, 2, 2, 4}, got); diff != "" {
		t.Errorf("served at once: 20 addresses one each, one address two more, 1 000 more addresses, another /64 and IPv4 (-want +got):\n%s", diff)
	}
}
