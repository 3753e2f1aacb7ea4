package registry

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestDecodeRegistrationRefusesHostileJSON gives registration files of
// wrong types and deep nesting: each is refused with
// ErrInvalidRegistration, quickly and without a panic.
func TestDecodeRegistrationRefusesHostileJSON(t *testing.T) {
	tests := map[string][]byte{
		"an array":                         []byte(`[]`),
		"a string":                         []byte(`"x"`),
		"a number":                         []byte(`1`),
		"null":                             []byte(`null`),
		"100 000 open brackets":            bytes.Repeat([]byte("["), 100_000),
		"deep nesting in an unknown key":   append([]byte(`{"name":"pve1","macs":["52:54:00:ba:5e:11"],"x":`), bytes.Repeat([]byte("["), 100_000)...),
		"macs of the wrong type":           []byte(`{"name":"pve1","macs":52}`),
		"a name with a path":               []byte(`{"name":"../pve1","macs":["52:54:00:ba:5e:11"]}`),
		"a name with a NUL byte":           []byte("{\"name\":\"pve1\\u0000\",\"macs\":[\"52:54:00:ba:5e:11\"]}"),
		"a name of 10 000 characters":      []byte(`{"name":"` + strings.Repeat("a", 10_000) + `","macs":["52:54:00:ba:5e:11"]}`),
		"a boot disk with a path":          []byte(`{"name":"pve1","macs":["52:54:00:ba:5e:11"],"boot_disk":"../../dev/sda"}`),
		"deeply nested objects in a value": []byte(`{"name":"pve1","macs":["52:54:00:ba:5e:11"],"x":` + strings.Repeat(`{"a":`, 100_000)),
	}
	for name, data := range tests {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := DecodeRegistration(data, "")
			if !errors.Is(err, ErrInvalidRegistration) {
				t.Errorf("err = %v, want ErrInvalidRegistration", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("refusing took %v", d)
			}
		})
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
