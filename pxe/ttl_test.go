package pxe

import (
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/window"
)

// TestNewRefusesATTLOverTheBound: the library holds the window's upper
// bound as the CLI and the API do; NoTTL stays for embedders.
func TestNewRefusesATTLOverTheBound(t *testing.T) {
	for _, ttl := range []time.Duration{window.MaxTTL + time.Second, 87600 * time.Hour} {
		if _, err := New(Config{StateDir: t.TempDir(), TTL: ttl}); err == nil {
			t.Errorf("New with TTL %s: no error, want the window's bound", ttl)
		}
	}
	for _, ttl := range []time.Duration{window.MaxTTL, NoTTL, 300 * time.Millisecond} {
		if _, err := New(Config{StateDir: t.TempDir(), TTL: ttl}); err != nil {
			t.Errorf("New with TTL %s: %v", ttl, err)
		}
	}
}
