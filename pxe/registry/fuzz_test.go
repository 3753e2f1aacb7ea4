package registry

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func FuzzLoadRegistration(f *testing.F) {
	ents, err := os.ReadDir(filepath.Join("testdata", "registry"))
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range ents {
		if strings.Contains(e.Name(), ".json") {
			f.Add(readFixture(f, e.Name()), "")
		}
	}
	f.Add([]byte(`{"macs":["AA-BB-CC-DD-EE-0F"],"boot_disk":"any","x":null}`), "tappaas3")
	f.Add([]byte(`{"name":"a","pools":null,"macs":null,"install_ip":""}`), "")
	f.Add([]byte(`{"name":"a","created":"2026-07-06T12:00:00.5Z","consumed_macs":[]}`), "a")
	f.Fuzz(func(t *testing.T, data []byte, stem string) {
		r, err := DecodeRegistration(data, stem)
		if err != nil {
			if !errors.Is(err, ErrInvalidRegistration) {
				t.Fatalf("error %v does not wrap ErrInvalidRegistration", err)
			}
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("decoded registration does not validate: %v", err)
		}
		out, err := EncodeRegistration(r)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		again, err := DecodeRegistration(out, r.Name)
		if err != nil {
			t.Fatalf("decode the encoded registration: %v\n%s", err, out)
		}
		if diff := cmp.Diff(r, again, cmp.Comparer(func(a, b json.RawMessage) bool {
			var x, y any
			return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && cmp.Equal(x, y)
		})); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}
