package netboot

import (
	"strconv"
	"strings"

	"github.com/plasmactl/plasma-node/answer"
)

// answerFormat is the format of the answer for a request with the Accept
// header accept from installer v: JSON when the header prefers
// application/json to application/toml (RFC 9110 §12.5.1: each type's
// quality is that of its most specific matching range, "type/subtype" over
// "type/*" over "*/*", q=0 refusing it; a range with a malformed q is
// ignored) and v reads JSON ([answer.Version.TakesJSON]); TOML otherwise,
// as for a request without the header, a tie or an installer before 9.2.
// proxmox-fetch-answer 9.2 sends "application/json,
// application/toml;q=0.5".
func answerFormat(accept string, v answer.Version) answer.Format {
	if accept == "" || !v.TakesJSON() {
		return answer.FormatTOML
	}
	var js, toml quality
	for accept != "" {
		var r string
		r, accept, _ = strings.Cut(accept, ",")
		typ, q, ok := mediaRange(r)
		if !ok {
			continue
		}
		js.match(typ, "json", q)
		toml.match(typ, "toml", q)
	}
	if js.q() > toml.q() {
		return answer.FormatJSON
	}
	return answer.FormatTOML
}

// quality is a type's quality from its most specific matching range.
type quality struct {
	specificity int // 0 none, 1 */*, 2 application/*, 3 application/sub
	value       float64
}

// match takes range typ of quality q for application/sub when it matches
// more specifically than the ranges before.
func (x *quality) match(typ, sub string, q float64) {
	s := 0
	switch {
	case strings.EqualFold(typ, "application/"+sub):
		s = 3
	case strings.EqualFold(typ, "application/*"):
		s = 2
	case typ == "*/*":
		s = 1
	}
	if s > x.specificity {
		x.specificity, x.value = s, q
	}
}

// q is the quality, 0 when no range matched.
func (x quality) q() float64 {
	if x.specificity == 0 {
		return 0
	}
	return x.value
}

// mediaRange parses one range of an Accept header, "type/sub;q=0.5;p=v",
// into its type and quality (1 without q); false when it is malformed.
func mediaRange(r string) (string, float64, bool) {
	typ, params, _ := strings.Cut(r, ";")
	typ = strings.TrimSpace(typ)
	if !strings.Contains(typ, "/") {
		return "", 0, false
	}
	q := 1.0
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		k, val, _ := strings.Cut(p, "=")
		if !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || f < 0 || f > 1 {
			return "", 0, false
		}
		q = f
	}
	return typ, q, true
}
