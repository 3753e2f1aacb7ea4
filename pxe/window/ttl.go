package window

import (
	"fmt"
	"time"

	"github.com/plasmactl/plasma-node/internal/usage"
)

// The bounds of a window's TTL, the same on the command line, in the API
// and in the library ([CheckTTL]).
const (
	// MinTTL is the shortest window one may ask for: a second; a shorter
	// one would close before it served.
	MinTTL = time.Second
	// MaxTTL is the longest window: a week. A server refuses a longer TTL
	// too, so no caller opens one that outlives what was meant.
	MaxTTL = 7 * 24 * time.Hour
)

// TTLRule states [MinTTL] and [MaxTTL] as every refusal of a TTL says
// them.
const TTLRule = "want a duration from 1s to 168h (a week), such as 2h or 30m"

// ErrInvalidTTL is wrapped by [CheckTTL]'s error. It means bad input.
var ErrInvalidTTL = usage.New("invalid window TTL")

// CheckTTL is the rule for a TTL asked for a window: from [MinTTL] to
// [MaxTTL]. The error wraps [ErrInvalidTTL] and states [TTLRule].
func CheckTTL(ttl time.Duration) error {
	if ttl < MinTTL || ttl > MaxTTL {
		return fmt.Errorf("%w %s: %s", ErrInvalidTTL, ttl, TTLRule)
	}
	return nil
}
