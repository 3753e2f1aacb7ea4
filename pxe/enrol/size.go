package enrol

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Size is a disk or memory size in bytes, written in rules as a number
// with a unit: "200GB", "1.5TB", "512GiB" (decimal GB and TB as disk
// vendors count, binary GiB and TiB), or a plain number of bytes.
type Size uint64

// The units a [Size] takes, longest first so "GiB" is not read as "B".
var units = []struct {
	name string
	mult float64
}{
	{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20},
	{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"B", 1},
}

// ParseSize reads s as a [Size]. The error names s and says what would
// be valid.
func ParseSize(s string) (Size, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	for _, u := range units {
		if strings.HasSuffix(t, u.name) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.name)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || f*mult > 1<<63 {
		return 0, fmt.Errorf("size %q: want a number with a unit, such as 200GB, 1.5TB or 512GiB", s)
	}
	return Size(f * mult), nil
}

// String writes s in GB (or TB from 1000 GB), as [ParseSize] reads it
// back to within rounding, and as a reason states it: "120 GB".
func (s Size) String() string {
	switch {
	case s >= 1e12:
		return strconv.FormatFloat(float64(s)/1e12, 'f', -1, 64) + " TB"
	case s >= 1e9:
		return strconv.FormatFloat(float64(s)/1e9, 'f', 0, 64) + " GB"
	case s >= 1e6:
		return strconv.FormatFloat(float64(s)/1e6, 'f', 0, 64) + " MB"
	}
	return strconv.FormatUint(uint64(s), 10) + " B"
}

// MarshalJSON writes the size as a whole number of GB ("200GB") when
// it is one, else as its number of bytes: exact either way.
func (s Size) MarshalJSON() ([]byte, error) {
	if s > 0 && s%1e9 == 0 {
		return json.Marshal(strconv.FormatUint(uint64(s/1e9), 10) + "GB")
	}
	return json.Marshal(uint64(s))
}

// UnmarshalJSON reads a number of bytes or a string [ParseSize] takes.
func (s *Size) UnmarshalJSON(data []byte) error {
	var n uint64
	if err := json.Unmarshal(data, &n); err == nil {
		*s = Size(n)
		return nil
	}
	var str string
	if err := json.Unmarshal(data, &str); err != nil {
		return fmt.Errorf("size %s: want a number with a unit, such as 200GB", data)
	}
	v, err := ParseSize(str)
	*s = v
	return err
}
