package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// duration is a flag value taking a Go duration (2h, 30m, 1h30m) or a
// number of seconds (7200, as TAPPaaS's --ttl takes it).
type duration struct{ d *time.Duration }

// DurationVar defines a duration flag that also takes plain seconds;
// anything else is refused naming the forms it takes.
func DurationVar(fs *pflag.FlagSet, p *time.Duration, name string, def time.Duration, usage string) {
	*p = def
	fs.Var(duration{p}, name, usage+" (a duration such as 2h or 30m, or seconds)")
}

func (d duration) String() string {
	if d.d == nil {
		return ""
	}
	return d.d.String()
}

func (d duration) Set(s string) error {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseUint(s, 10, 63); err == nil {
		if n > uint64(1<<63-1)/uint64(time.Second) {
			return fmt.Errorf("%s seconds is too long", s)
		}
		*d.d = time.Duration(n) * time.Second
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a duration with its unit, such as 2h, 30m or 90s, or a number of seconds such as 7200")
	}
	*d.d = v
	return nil
}

func (duration) Type() string { return "duration" }

// RefuseEmpty returns a [Usage] error for a flag of cmd given an empty
// value (--boot-disk ”), which would otherwise read as the flag left out
// and do what its absence does.
func RefuseEmpty(fs *pflag.FlagSet) error {
	var err error
	fs.Visit(func(f *pflag.Flag) {
		if err != nil {
			return
		}
		empty := false
		switch f.Value.Type() {
		case "string":
			empty = strings.TrimSpace(f.Value.String()) == ""
		case "stringArray", "stringSlice":
			if sv, ok := f.Value.(pflag.SliceValue); ok {
				for _, v := range sv.GetSlice() {
					empty = empty || strings.TrimSpace(v) == ""
				}
			}
		}
		if empty {
			err = Usage(fmt.Errorf("--%s: empty value: give one, or leave the flag out", f.Name))
		}
	})
	return err
}
