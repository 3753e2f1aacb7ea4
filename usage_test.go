package plasmanode_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/ipam"
	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	pxeprovider "github.com/plasmactl/plasma-node/providers/pxe"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/zones"
)

// TestIsUsageError pins the answer for every error IsUsageError knew by name
// before it read a marker, bare and wrapped, and for errors that are not bad
// input.
func TestIsUsageError(t *testing.T) {
	tests := map[string]struct {
		err  error
		want bool
	}{
		"an invalid zone":             {zones.ErrInvalidZone, true},
		"an invalid zone spec":        {zones.ErrInvalidSpec, true},
		"an invalid zone op":          {zones.ErrInvalidOp, true},
		"a zone not allocated":        {zones.ErrNotAllocated, true},
		"an unknown zone":             {zones.ErrUnknownZone, true},
		"an invalid topology":         {zones.ErrInvalidTopology, true},
		"an invalid playbook":         {zones.ErrInvalidPlaybook, true},
		"an invalid pool":             {ipam.ErrInvalidPool, true},
		"an address in use":           {ipam.ErrInUse, true},
		"an address out of pool":      {ipam.ErrOutOfPool, true},
		"a reserved address":          {ipam.ErrReserved, true},
		"an invalid node name":        {nodes.ErrInvalidName, true},
		"a node that exists":          {nodes.ErrExists, true},
		"a malformed file":            {nodes.ErrMalformed, true},
		"a platform not found":        {nodes.ErrPlatformNotFound, true},
		"a node not found":            {nodes.ErrNodeNotFound, true},
		"an ambiguous name":           {nodes.ErrAmbiguous, true},
		"no project folder":           {plasmanode.ErrProjectDir, true},
		"an unknown provider":         {providers.ErrUnknown, true},
		"conflicting settings":        {plasmanode.ErrConflict, true},
		"an unknown key":              {plasmanode.ErrUnknownKey, true},
		"an invalid address":          {plasmanode.ErrInvalidAddress, true},
		"an invalid state":            {plasmanode.ErrInvalidState, true},
		"an invalid hardware list":    {pxeprovider.ErrInvalidHardware, true},
		"not enough machines":         {pxeprovider.ErrNoHardware, true},
		"an invalid registration":     {registry.ErrInvalidRegistration, true},
		"an unknown provider by name": {&providers.UnknownError{Name: "hetzner"}, true},
		"a bad option":                {&plasmanode.OptionError{Field: "Hostname", Value: "x", Err: errors.New("bad")}, true},
		"a needed option":             {&plasmanode.OptionNeededError{Field: "Hostname", Err: errors.New("none")}, true},
		"no error":                    {nil, false},
		"a plain failure":             {errors.New("disk full"), false},
		"a cancelled context":         {context.Canceled, false},
		"an exhausted pool":           {ipam.ErrExhausted, false},
		"a locked platform":           {nodes.ErrLocked, false},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := plasmanode.IsUsageError(tt.err); got != tt.want {
				t.Errorf("IsUsageError(%v) = %v, want %v", tt.err, got, tt.want)
			}
			if tt.err == nil {
				return
			}
			wrapped := fmt.Errorf("provision web1: %w", tt.err)
			if got := plasmanode.IsUsageError(wrapped); got != tt.want {
				t.Errorf("IsUsageError(%v) = %v, want %v", wrapped, got, tt.want)
			}
			joined := errors.Join(errors.New("other"), tt.err)
			if got := plasmanode.IsUsageError(joined); got != tt.want {
				t.Errorf("IsUsageError(%v) = %v, want %v", joined, got, tt.want)
			}
		})
	}
}
