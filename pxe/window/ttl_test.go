package window

import (
	"errors"
	"testing"
	"time"
)

// TestTTLRuleStatesTheBounds keeps TTLRule's words and the bounds one.
func TestTTLRuleStatesTheBounds(t *testing.T) {
	for ttl, ok := range map[time.Duration]bool{
		MinTTL: true, MaxTTL: true, 2 * time.Hour: true,
		MinTTL - 1: false, MaxTTL + 1: false, 0: false, -time.Hour: false, 87600 * time.Hour: false,
	} {
		err := CheckTTL(ttl)
		if (err == nil) != ok || (err != nil && !errors.Is(err, ErrInvalidTTL)) {
			t.Errorf("CheckTTL(%s) = %v, want ok %v", ttl, err, ok)
		}
	}
	if MinTTL != time.Second || MaxTTL != 168*time.Hour {
		t.Errorf("TTLRule %q no longer states MinTTL %s and MaxTTL %s", TTLRule, MinTTL, MaxTTL)
	}
}
