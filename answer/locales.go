package answer

import (
	_ "embed"
	"slices"
	"strings"
	"sync"
)

// The installer checks global.country and global.timezone against the
// locale list of its ISO (proxmox-auto-installer's
// verify_locale_settings), which it builds from tzdata: the countries of
// iso3166.tab and the zones of zone.tab, with UTC beside them. The lists
// below are those files of Debian's tzdata, in the order of the list.

//go:embed locales/timezones.txt
var timezonesTxt string

//go:embed locales/countries.txt
var countriesTxt string

// lines returns the sorted, non-comment lines of an embedded list,
// parsed once.
func lines(txt string) func() []string {
	return sync.OnceValue(func() []string {
		var out []string
		for l := range strings.SplitSeq(txt, "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				out = append(out, l)
			}
		}
		slices.Sort(out)
		return out
	})
}

var (
	timezoneList = lines(timezonesTxt)
	countryList  = lines(countriesTxt)
)

// inList checks that the string is one of list's values; a value off
// the list is refused with the nearest one suggested.
func inList(list func() []string, what string) textCheck {
	return func(c *checker, path, s string) bool {
		l := list()
		if _, ok := slices.BinarySearch(l, s); ok {
			return true
		}
		if near := nearest(l, s); near != "" {
			c.bad(path, "%q: not a %s the installer knows; did you mean %q?", s, what, near)
		} else {
			c.bad(path, "%q: not a %s the installer knows", s, what)
		}
		return true
	}
}

// nearest returns the value of list closest to s by edit distance, ignoring
// case, when it is close (at most a third of s's length); else "".
func nearest(list []string, s string) string {
	best, bestD := "", len(s)/3+1
	ls := strings.ToLower(s)
	for _, v := range list {
		if d := editDistance(ls, strings.ToLower(v), bestD); d < bestD {
			best, bestD = v, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, or limit when it
// is at least limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin >= limit {
			return limit
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}
