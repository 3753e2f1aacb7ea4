package answer_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/answer"
)

// TestRenderJSONMatchesGoldenFiles: the JSON answer (9.2+) is the
// installer's AutoInstallerConfig in kebab-case, and it decodes to the same
// model as the TOML answer for the same installer.
func TestRenderJSONMatchesGoldenFiles(t *testing.T) {
	answers := map[string]func() *answer.Answer{"full": fullAnswer, "boot-disk": bootDiskAnswer}
	for name, mk := range answers {
		v := answer.Version92
		t.Run(name, func(t *testing.T) {
			opts := answer.RenderOptions{Header: "dropped: JSON has no comments", DropUnsupported: true, Format: answer.FormatJSON}
			got, err := answer.Render(mk(), v, opts)
			if err != nil {
				t.Fatalf("Render JSON: %v", err)
			}
			answer.CheckGolden(t, filepath.Join("testdata", "golden", fmt.Sprintf("%s-%s.json", name, v)), got)
			fromJSON, err := answer.DecodeJSON(got, v)
			if err != nil {
				t.Fatalf("DecodeJSON(Render JSON): %v", err)
			}
			tomlBytes, err := answer.Render(mk(), v, answer.RenderOptions{DropUnsupported: true})
			if err != nil {
				t.Fatal(err)
			}
			fromTOML, err := answer.Decode(tomlBytes, v)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(fromTOML, fromJSON); diff != "" {
				t.Errorf("the JSON answer means something else than the TOML one (-toml +json):\n%s", diff)
			}
		})
	}
}

func TestRenderJSONNeedsInstaller92(t *testing.T) {
	for _, v := range []answer.Version{answer.Version82, answer.Version84, answer.Version91} {
		_, err := answer.Render(bootDiskAnswer(), v, answer.RenderOptions{Format: answer.FormatJSON, DropUnsupported: true})
		if !errors.Is(err, answer.ErrUnsupported) || !strings.Contains(err.Error(), "JSON answers need installer 9.2") {
			t.Errorf("Render JSON for %s: got %v, want ErrUnsupported naming 9.2", v, err)
		}
		if _, err := answer.DecodeJSON([]byte(`{}`), v); !errors.Is(err, answer.ErrUnsupported) {
			t.Errorf("DecodeJSON for %s: got %v, want ErrUnsupported", v, err)
		}
	}
}

// minimalJSON is the installer's minimal.toml as JSON.
const minimalJSON = `{"global":{"keyboard":"de","country":"at","fqdn":"pveauto.testinstall","mailto":"mail@no.invalid",
"timezone":"Europe/Vienna","root-password":"12345678"},"network":{"source":"from-dhcp"},
"disk-setup":{"filesystem":"ext4","disk-list":["sda"]}}`

func TestDecodeJSONReadsValuesAsTheInstaller(t *testing.T) {
	zfs := func(opts string) string {
		return strings.Replace(minimalJSON, `"filesystem":"ext4","disk-list":["sda"]`,
			`"filesystem":"zfs","disk-list":["sda"],"zfs":{"raid":"raid0"`+opts+`}`, 1)
	}
	tests := map[string]struct {
		in   string
		want string // "" for accepted, else a part of the error
	}{
		"the minimal answer is read":              {in: minimalJSON},
		"a snake_case alias is read from 9.2":     {in: strings.Replace(minimalJSON, "root-password", "root_password", 1)},
		"an integer where one is wanted is read":  {in: zfs(`,"ashift":12`)},
		"an integer for a size is read":           {in: zfs(`,"hdsize":80`)},
		"a fraction for a size is read":           {in: zfs(`,"hdsize":80.5`)},
		"null is an absent optional key":          {in: zfs(`,"ashift":null`)},
		"a float where an integer is wanted":      {in: zfs(`,"ashift":12.0`), want: "disk-setup.zfs.ashift: want an integer, got a float"},
		"a string where an integer is wanted":     {in: zfs(`,"ashift":"12"`), want: "want an integer, got a string"},
		"an unknown key is refused":               {in: strings.Replace(minimalJSON, `"keyboard"`, `"keybaord":"de","keyboard"`, 1), want: "global.keybaord: unknown key"},
		"a missing section is refused":            {in: `{"global":{},"network":{"source":"from-dhcp"}}`, want: "disk-setup"},
		"an array is not an answer":               {in: `[]`, want: "want a JSON object"},
		"trailing data is refused":                {in: minimalJSON + `{}`, want: "after the JSON object"},
		"a syntax error is refused":               {in: `{"global":`, want: "invalid answer"},
		"null in a list is refused":               {in: strings.Replace(minimalJSON, `["sda"]`, `["sda",null]`, 1), want: "want a string, got null"},
		"a rule across keys holds in JSON too":    {in: strings.Replace(minimalJSON, `"12345678"`, `"1234567"`, 1), want: "at least 8"},
		"the installer's pinning example is read": {in: strings.Replace(minimalJSON, `"source":"from-dhcp"`, `"source":"from-dhcp","interface-name-pinning":{"enabled":true,"mapping":{"24:8A:07:1E:05:BC":"lan0"}}`, 1)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := answer.DecodeJSON([]byte(tc.in), answer.Version92)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("DecodeJSON: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("DecodeJSON: got %v, want an error containing %q", err, tc.want)
			case tc.want != "" && !errors.Is(err, answer.ErrInvalid):
				t.Fatalf("DecodeJSON: %v does not wrap ErrInvalid", err)
			}
		})
	}
}

func TestSniffFormat(t *testing.T) {
	tests := map[string]struct {
		in   string
		want answer.Format
	}{
		"a JSON object":              {in: minimalJSON, want: answer.FormatJSON},
		"a JSON object after spaces": {in: "\n\t {}", want: answer.FormatJSON},
		"a JSON object after a BOM":  {in: "\ufeff{}", want: answer.FormatJSON},
		"a TOML table":               {in: "[global]\n", want: answer.FormatTOML},
		"a TOML comment":             {in: "# {json}\n[global]\n", want: answer.FormatTOML},
		"nothing":                    {in: "", want: answer.FormatTOML},
	}
	for name, tc := range tests {
		if got := answer.SniffFormat([]byte(tc.in)); got != tc.want {
			t.Errorf("%s: SniffFormat = %v, want %v", name, got, tc.want)
		}
	}
	if answer.FormatJSON.ContentType() != "application/json" || answer.FormatTOML.ContentType() != "application/toml" {
		t.Errorf("content types: %q, %q", answer.FormatJSON.ContentType(), answer.FormatTOML.ContentType())
	}
	if !answer.Version92.TakesJSON() || answer.Version91.TakesJSON() {
		t.Error("TakesJSON: want 9.2 and later only")
	}
}

func FuzzDecodeJSON(f *testing.F) {
	f.Add([]byte(minimalJSON))
	f.Add([]byte(`{"global":{"fqdn":{"source":"from-dhcp"}}}`))
	f.Add([]byte(`{"disk-setup":{"zfs":{"ashift":1e3}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := answer.DecodeJSON(data, answer.Version92)
		if err != nil {
			if !errors.Is(err, answer.ErrInvalid) && !errors.Is(err, answer.ErrUnsupported) {
				t.Fatalf("error wraps neither ErrInvalid nor ErrUnsupported: %v", err)
			}
			return
		}
		out, err := answer.Render(a, answer.Version92, answer.RenderOptions{Format: answer.FormatJSON})
		if err != nil {
			t.Fatalf("Render of a decoded answer: %v", err)
		}
		b, err := answer.DecodeJSON(out, answer.Version92)
		if err != nil {
			t.Fatalf("DecodeJSON of the rendered answer: %v\n%s", err, out)
		}
		if diff := cmp.Diff(a, b); diff != "" {
			t.Fatalf("round trip changed the answer (-first +second):\n%s", diff)
		}
	})
}
