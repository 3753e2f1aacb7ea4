package main

import "testing"

// TestOnlyTheKernelsInitIsTheAgent: node-provisioner acts as the discovery
// agent only as PID 1 started as /init, never as a container's PID 1.
func TestOnlyTheKernelsInitIsTheAgent(t *testing.T) {
	tests := map[string]struct {
		pid   int
		argv0 string
		want  bool
	}{
		"the discovery initrd's /init":            {1, "/init", true},
		"a container's PID 1 by name":             {1, "node-provisioner", false},
		"a container's PID 1 by path":             {1, "/usr/local/bin/node-provisioner", false},
		"an ordinary process named /init":         {4242, "/init", false},
		"an ordinary process":                     {4242, "node-provisioner", false},
		"PID 1 started as init without its slash": {1, "init", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := isDiscoveryInit(tc.pid, tc.argv0); got != tc.want {
				t.Errorf("isDiscoveryInit(%d, %q) = %v, want %v", tc.pid, tc.argv0, got, tc.want)
			}
		})
	}
}
