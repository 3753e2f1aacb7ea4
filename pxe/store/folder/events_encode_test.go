package folder

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/events"
)

// TestAppendEventIsJSONsBytes: the event line the file store writes is
// byte for byte encoding/json's, on the fast path and off it.
func TestAppendEventIsJSONsBytes(t *testing.T) {
	on := true
	off := false
	at := time.Date(2026, 12, 4, 21, 30, 1, 123456789, time.UTC)
	tests := map[string]events.Event{
		"an offer":             {Time: at, Kind: events.DHCPOffer, MAC: "52:54:00:12:34:56", ClientIP: "10.78.0.100", Detail: "arch 7 (UEFI x86-64), file snponly.efi"},
		"every field":          {Time: at, Kind: events.Installed, Node: "tappaas1", MAC: "52:54:00:12:34:56", Serial: "S1", ClientIP: "10.0.0.1", Status: 200, Detail: "ok", BootMode: "efi", SecureBoot: &on},
		"secure boot off":      {Time: at, Kind: events.Installed, SecureBoot: &off},
		"no kind":              {Time: at},
		"zero time":            {Kind: events.Answer},
		"a negative status":    {Time: at, Kind: events.Refused, Status: -1},
		"a quote to escape":    {Time: at, Kind: events.Refused, Detail: `bad "name"`},
		"html characters":      {Time: at, Kind: events.Refused, Detail: "<script>&"},
		"a newline":            {Time: at, Kind: events.Refused, Node: "a\nb"},
		"not ASCII":            {Time: at, Kind: events.Refused, Detail: "café \u2028"},
		"invalid UTF-8":        {Time: at, Kind: events.Refused, Detail: "\xff\xfe"},
		"a local time":         {Time: at.In(time.FixedZone("CET", 3600)), Kind: events.Answer},
		"an offset in seconds": {Time: at.In(time.FixedZone("LMT", 3601)), Kind: events.Answer},
		"a year past 9999":     {Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Kind: events.Answer},
		"a kind to escape":     {Time: at, Kind: events.Kind(`a"b`)},
	}
	for name, e := range tests {
		want, wantErr := json.Marshal(e)
		got, err := appendEvent([]byte("prefix"), e)
		if (err != nil) != (wantErr != nil) {
			t.Errorf("%s: error %v, encoding/json's %v", name, err, wantErr)
			continue
		}
		if err != nil {
			continue
		}
		if diff := cmp.Diff("prefix"+string(want), string(got)); diff != "" {
			t.Errorf("%s: (-encoding/json +appendEvent):\n%s", name, diff)
		}
	}
}

// FuzzAppendEvent: for any event, appendEvent writes encoding/json's
// bytes.
func FuzzAppendEvent(f *testing.F) {
	f.Add(int64(1764883801), string(events.DHCPOffer), "", "52:54:00:12:34:56", "", "10.0.0.1", 0, "arch 7", "", 0)
	f.Add(int64(-62135596800), "installed", "n<1>", "", "s\"", "", 200, "\u2028", "efi", 2)
	f.Fuzz(func(t *testing.T, sec int64, kind, node, mac, serial, ip string, status int, detail, mode string, sb int) {
		e := events.Event{Time: time.Unix(sec, int64(status)).UTC(), Kind: events.Kind(kind), Node: node, MAC: mac, Serial: serial,
			ClientIP: ip, Status: status, Detail: detail, BootMode: mode}
		if sb > 0 {
			v := sb%2 == 0
			e.SecureBoot = &v
		}
		want, wantErr := json.Marshal(e)
		got, err := appendEvent(nil, e)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("error %v, encoding/json's %v", err, wantErr)
		}
		if err == nil && string(got) != string(want) {
			t.Fatalf("appendEvent %s, encoding/json %s", got, want)
		}
	})
}

// BenchmarkAppendEvent: an offer's line, by appendEvent and by
// encoding/json.
func BenchmarkAppendEvent(b *testing.B) {
	e := events.Event{Time: time.Now().UTC(), Kind: events.DHCPOffer, MAC: "52:54:00:12:34:56", ClientIP: "10.78.0.100", Detail: "arch 7 (UEFI x86-64), file snponly.efi"}
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf, _ = appendEvent(buf[:0], e)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			json.Marshal(e)
		}
	})
}
