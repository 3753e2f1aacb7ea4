package usage

import (
	"errors"
	"fmt"
	"testing"
)

func TestIs(t *testing.T) {
	bad := New("invalid thing")
	tests := map[string]struct {
		err  error
		want bool
	}{
		"a marked sentinel is bad input":         {bad, true},
		"a wrapped marked sentinel is bad input": {fmt.Errorf("read x: %w", bad), true},
		"a plain error is a failure":             {errors.New("invalid thing"), false},
		"nil is no bad input":                    {nil, false},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Is(tt.err); got != tt.want {
				t.Errorf("Is(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
	if bad.Error() != "invalid thing" {
		t.Errorf("text %q", bad.Error())
	}
	if errors.Is(bad, New("invalid thing")) {
		t.Error("two sentinels with one text compare equal")
	}
}
