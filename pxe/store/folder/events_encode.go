package folder

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/plasmactl/plasma-node/pxe/events"
)

// appendEvent appends e's JSON line (without its newline) to b, byte for
// byte what encoding/json makes of it, without reflection: a storm's boot
// steps are written by the thousand a second on the window's CPU. What
// the fast path does not cover (a string to escape, a time that is not
// plain RFC 3339) is left to encoding/json.
func appendEvent(b []byte, e events.Event) ([]byte, error) {
	if !plainTime(e.Time) {
		return appendMarshal(b, e)
	}
	start := len(b)
	b = append(b, `{"time":"`...)
	b = e.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	var ok bool
	if b, ok = appendField(b, `,"kind":`, string(e.Kind), true); !ok {
		return appendMarshal(b[:start], e)
	}
	for _, f := range [...]struct {
		key, v string
	}{{`,"node":`, e.Node}, {`,"mac":`, e.MAC}, {`,"serial":`, e.Serial}, {`,"client_ip":`, e.ClientIP}} {
		if b, ok = appendField(b, f.key, f.v, false); !ok {
			return appendMarshal(b[:start], e)
		}
	}
	if e.Status != 0 {
		b = append(b, `,"status":`...)
		b = strconv.AppendInt(b, int64(e.Status), 10)
	}
	if b, ok = appendField(b, `,"detail":`, e.Detail, false); !ok {
		return appendMarshal(b[:start], e)
	}
	if b, ok = appendField(b, `,"boot_mode":`, e.BootMode, false); !ok {
		return appendMarshal(b[:start], e)
	}
	if e.SecureBoot != nil {
		b = append(b, `,"secure_boot":`...)
		b = strconv.AppendBool(b, *e.SecureBoot)
	}
	return append(b, '}'), nil
}

func appendMarshal(b []byte, e events.Event) ([]byte, error) {
	line, err := json.Marshal(e)
	if err != nil {
		return b, err
	}
	return append(b, line...), nil
}

// plainTime reports whether encoding/json writes t as AppendFormat's
// RFC 3339 form: a four-digit year and a whole-minute offset.
func plainTime(t time.Time) bool {
	if y := t.Year(); y < 0 || y > 9999 {
		return false
	}
	_, off := t.Zone()
	return off%60 == 0
}

// appendField appends key and the quoted value v, when v is not empty or
// always is set; ok is false when v holds a byte that encoding/json
// escapes (or that is not ASCII), which the fast path leaves to it.
func appendField(b []byte, key, v string, always bool) ([]byte, bool) {
	if v == "" && !always {
		return b, true
	}
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return b, false
		}
	}
	b = append(b, key...)
	b = append(b, '"')
	b = append(b, v...)
	return append(b, '"'), true
}
