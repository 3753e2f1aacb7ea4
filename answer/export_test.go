package answer

import "slices"

// Timezones returns the time zone names the installer accepts for
// global.timezone, sorted: tzdata's zone.tab zones and "UTC". The slice
// is a copy.
func Timezones() []string { return slices.Clone(timezoneList()) }
