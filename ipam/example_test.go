package ipam_test

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/plasmactl/plasma-node/ipam"
)

// Allocating private IPs for new nodes the way plasmactl-node does, against
// the private_ip of the node files already there.
func ExampleDefault() {
	pool, err := ipam.Default("") // networking.private_network unset
	if err != nil {
		fmt.Println(err)
		return
	}
	used := ipam.NewUsed(netip.MustParseAddr("192.168.0.1"), netip.MustParseAddr("192.168.0.3"))
	got, err := pool.Allocate(used, 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got)

	used.Add(got...) // the next call must not hand them out again
	err = pool.Check(netip.MustParseAddr("192.168.0.4"), used)
	fmt.Println(errors.Is(err, ipam.ErrInUse), err)
	// Output:
	// [192.168.0.2 192.168.0.4 192.168.0.5]
	// true 192.168.0.4 is already used
}

func ExampleNew() {
	pool, err := ipam.New(ipam.Config{
		Name:    "lab",
		CIDR:    "10.0.0.0/24",
		Range:   "10.0.0.10-10.0.0.20",
		Exclude: []string{"10.0.0.11-10.0.0.12"},
		Gateway: "10.0.0.10",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(pool)
	got, err := pool.Allocate(nil, 2)
	fmt.Println(got, err)
	_, err = ipam.New(ipam.Config{Name: "lab", CIDR: "10.0.0.0/24", Range: "10.0.1.1-10.0.1.9"})
	fmt.Println(err)
	// Output:
	// pool "lab" 10.0.0.0/24 range 10.0.0.10-10.0.0.20 gateway 10.0.0.10 exclude 10.0.0.11-10.0.0.12
	// [10.0.0.13 10.0.0.14] <nil>
	// pool "lab": range "10.0.1.1-10.0.1.9" is outside 10.0.0.0/24
}
