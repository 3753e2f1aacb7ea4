package sitepublish

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/internal/hostport"
)

var update = flag.Bool("update", false, "rewrite golden files")

const (
	testURL = "https://192.0.2.10:8090/answer"
	testFP  = "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89"
)

func TestNew(t *testing.T) {
	tests := map[string]struct {
		url, fp, domain string
		want            Records
		wantErr         error
	}{
		"an https URL with a lower-case bare fingerprint": {url: testURL, fp: strings.ToLower(strings.ReplaceAll(testFP, ":", "")), domain: "site.example",
			want: Records{AnswerURL: testURL, CertFingerprint: testFP, Domain: "site.example"}},
		"an http URL without a fingerprint": {url: "http://192.0.2.10:8090/answer", domain: "e2e.test",
			want: Records{AnswerURL: "http://192.0.2.10:8090/answer", Domain: "e2e.test"}},
		"a relative URL":                    {url: "/answer", domain: "e2e.test", wantErr: ErrAnswerURL},
		"an ftp URL":                        {url: "ftp://192.0.2.10/answer", domain: "e2e.test", wantErr: ErrAnswerURL},
		"a comma Kea and dnsmasq split":     {url: "https://a.example/answer?x=1,2", domain: "e2e.test", wantErr: ErrAnswerURL},
		"a quote":                           {url: `https://a.example/an"swer`, domain: "e2e.test", wantErr: ErrAnswerURL},
		"a URL over 255 characters":         {url: "https://a.example/" + strings.Repeat("a", 240), domain: "e2e.test", wantErr: ErrAnswerURL},
		"a SHA-1 fingerprint":               {url: testURL, fp: "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01", domain: "e2e.test", wantErr: ErrFingerprint},
		"a fingerprint for an http URL":     {url: "http://192.0.2.10:8090/answer", fp: testFP, domain: "e2e.test", wantErr: ErrFingerprint},
		"no domain":                         {url: testURL, wantErr: ErrDomain},
		"a domain with an underscore":       {url: testURL, domain: "my_site.example", wantErr: ErrDomain},
		"a domain with a trailing dot":      {url: testURL, domain: "site.example.", wantErr: ErrDomain},
		"a domain in upper case is refused": {url: testURL, domain: "Site.Example", wantErr: ErrDomain},
		"a link-local IPv6 answer URL":      {url: "http://[fe80::2]:8090/answer", domain: "e2e.test", wantErr: hostport.ErrInvalid},
		"a global IPv6 answer URL": {url: "http://[2001:db8::2]:8090/answer", domain: "e2e.test",
			want: Records{AnswerURL: "http://[2001:db8::2]:8090/answer", Domain: "e2e.test"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := New(tc.url, tc.fp, tc.domain)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("New: %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr != nil {
				return
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("New (-want +got):\n%s", d)
			}
		})
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s (-want +got):\n%s", name, d)
	}
}

func TestText(t *testing.T) {
	withFP := Records{AnswerURL: testURL, CertFingerprint: testFP, Domain: "site.example"}
	plain := Records{AnswerURL: "http://192.0.2.10:8090/answer", Domain: "site.example"}
	golden(t, "all-fingerprint.txt", withFP.All())
	golden(t, "all-plain.txt", plain.All())
	for _, f := range Formats {
		s, err := withFP.Text(f)
		if err != nil || !strings.Contains(s, testURL) {
			t.Errorf("Text(%s) = %q, %v; want the URL", f, s, err)
		}
	}
	if _, err := withFP.Text("bind"); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "dnsmasq, kea") {
		t.Errorf("Text(bind): %v; want ErrFormat listing the formats", err)
	}
}

// TestKeaIsJSON: the Kea lines, inside braces, are the JSON Kea reads, and
// define both options as strings.
func TestKeaIsJSON(t *testing.T) {
	for _, r := range []Records{{AnswerURL: testURL, CertFingerprint: testFP, Domain: "e2e.test"}, {AnswerURL: testURL, Domain: "e2e.test"}} {
		s, _ := r.Text(FormatKea)
		var body []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.HasPrefix(l, "//") {
				body = append(body, l)
			}
		}
		var cfg struct {
			Defs []struct {
				Name, Space, Type string
				Code              int
			} `json:"option-def"`
			Data []struct{ Name, Data string } `json:"option-data"`
		}
		if err := json.Unmarshal([]byte("{"+strings.Join(body, "\n")+"}"), &cfg); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, s)
		}
		if len(cfg.Defs) != 2 || cfg.Defs[0].Code != 250 || cfg.Defs[1].Code != 251 || cfg.Defs[0].Type != "string" || cfg.Defs[1].Type != "string" {
			t.Errorf("option-def %+v", cfg.Defs)
		}
		if cfg.Data[0].Data != testURL || (r.CertFingerprint != "") != (len(cfg.Data) == 2) {
			t.Errorf("option-data %+v", cfg.Data)
		}
	}
}
