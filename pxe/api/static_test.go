package api_test

import "testing"

// A posted registration takes network (its static address, what
// plasma-node's provision sends for a node of an ip pool) and nic_names
// (pinned NIC names): both were refused as unknown fields, so provision
// of a static node through the API failed. A bad one is refused 422 on
// its field, saying why.
func TestRegistrationStaticNetwork(t *testing.T) {
	e := newEnv(t, nil)
	postRegistrations(t, e, map[string]postCase{
		"a static address":       {`{"name":"pve1","macs":["52:54:00:00:00:01"],"network":{"cidr":"10.0.0.60/24","gateway":"10.0.0.1","dns":"10.0.0.1"}}`, 201, "", `"cidr": "10.0.0.60/24"`},
		"pinned NIC names":       {`{"name":"pve2","macs":["52:54:00:00:00:02"],"nic_names":{"52:54:00:00:00:02":"nic0"}}`, 201, "", `"nic0"`},
		"a gateway off its net":  {`{"name":"pve3","macs":["52:54:00:00:00:03"],"network":{"cidr":"10.0.0.60/24","gateway":"10.9.0.1","dns":"10.0.0.1"}}`, 422, "network", "gateway"},
		"an unknown network key": {`{"name":"pve4","macs":["52:54:00:00:00:04"],"network":{"cidr":"10.0.0.60/24","gateway":"10.0.0.1","dns":"10.0.0.1","mtu":9000}}`, 400, "network.mtu", "mtu"},
		"a bad NIC name":         {`{"name":"pve5","macs":["52:54:00:00:00:05"],"nic_names":{"52:54:00:00:00:05":"eth/0"}}`, 422, "nic_names", "NIC name"},
	})
}
