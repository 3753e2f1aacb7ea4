package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWriteDataKeepsJSONNamesAndOrder: yaml has the JSON encoding's
// names, order and values (a numeric-looking string stays a string).
func TestWriteDataKeepsJSONNamesAndOrder(t *testing.T) {
	v := struct {
		Zeta  string   `json:"zeta"`
		Alpha []string `json:"alpha"`
		Empty []string `json:"empty"`
		Num   int      `json:"num"`
	}{Zeta: "0123", Alpha: []string{"a: b", "yes"}, Num: 7}
	tests := map[string]string{
		"json": "{\n  \"zeta\": \"0123\",\n  \"alpha\": [\n    \"a: b\",\n    \"yes\"\n  ],\n  \"empty\": null,\n  \"num\": 7\n}\n",
		"yaml": "zeta: \"0123\"\nalpha:\n  - 'a: b'\n  - \"yes\"\nempty: null\nnum: 7\n",
	}
	for format, want := range tests {
		var b strings.Builder
		if err := WriteData(&b, format, v); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, b.String()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", format, diff)
		}
	}
	if err := WriteData(io.Discard, "xml", v); err == nil {
		t.Error("xml: no error")
	}
}
