package answer_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/answer"
)

// TestValidateChecksTheInstallersLocaleList: global.timezone and
// global.country must be on the installer's list (tzdata's zone.tab and
// UTC; iso3166.tab), as verify_locale_settings refuses the rest; a near
// miss is named with its correction.
func TestValidateChecksTheInstallersLocaleList(t *testing.T) {
	tests := map[string]struct {
		tz, country string
		msg         string
	}{
		"a zone of zone.tab is valid":         {tz: "Europe/Vienna", country: "at"},
		"UTC is valid":                        {tz: "UTC", country: "us"},
		"a made-up zone is refused":           {tz: "Mars/Olympus", country: "at", msg: `global.timezone: "Mars/Olympus": not a time zone the installer knows`},
		"a misspelt zone gets its correction": {tz: "Europe/Viena", country: "at", msg: `did you mean "Europe/Vienna"?`},
		"a link zone.tab lacks is refused":    {tz: "US/Eastern", country: "us", msg: `"US/Eastern": not a time zone`},
		"a made-up country is refused":        {tz: "UTC", country: "xx", msg: `global.country: "xx": not a country code the installer knows`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := validAnswer()
			a.Global.Timezone, a.Global.Country = tc.tz, tc.country
			err := answer.Validate(a, answer.LatestVersion)
			switch {
			case tc.msg == "" && err != nil:
				t.Errorf("Validate: %v, want nil", err)
			case tc.msg != "" && (!errors.Is(err, answer.ErrInvalid) || !strings.Contains(err.Error(), tc.msg)):
				t.Errorf("Validate: %v, want ErrInvalid with %q", err, tc.msg)
			}
		})
	}
	if n := len(answer.Timezones()); n < 300 {
		t.Errorf("Timezones: %d zones, want tzdata's zone.tab (over 300)", n)
	}
}
