package daemon_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/client"
)

// TestATTLNotInTheFutureRefusesToOpen: a window asked for with a TTL too
// short to end in the future (1ns) is refused with 422 and stays closed,
// instead of opening without a deadline; a pxe.Config TTL in the past is
// refused as well, only NoTTL means no limit.
func TestATTLNotInTheFutureRefusesToOpen(t *testing.T) {
	state := t.TempDir()
	r := start(t, state)
	c := adminClient(t, state, r)
	ctx := context.Background()
	for _, ttl := range []time.Duration{time.Nanosecond, time.Millisecond, 999 * time.Millisecond} {
		_, err := c.OpenWindow(ctx, ttl)
		var ae *client.Error
		if !errors.As(err, &ae) || ae.Status != 422 {
			t.Errorf("open with ttl %s: %v, want 422", ttl, err)
		}
		if w, err := c.Window(ctx); err != nil || w.Open {
			t.Fatalf("after open with ttl %s: %+v %v, want closed", ttl, w, err)
		}
	}
	var ce *pxe.ConfigError
	if _, err := pxe.New(pxe.Config{StateDir: state, TTL: -time.Nanosecond}); !errors.As(err, &ce) || ce.Field != "TTL" {
		t.Errorf("pxe.New with a TTL in the past: %v, want a ConfigError for TTL", err)
	}
	if _, err := pxe.New(pxe.Config{StateDir: state, TTL: pxe.NoTTL}); err != nil {
		t.Errorf("pxe.New with NoTTL: %v", err)
	}
}
