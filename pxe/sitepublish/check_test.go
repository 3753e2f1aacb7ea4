package sitepublish

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// fakeResolver answers from a map of names (with their trailing dot);
// a name it lacks is not found, and block makes every lookup wait for
// its context.
type fakeResolver struct {
	txt   map[string][]string
	err   error
	block bool
	asked []string
}

func (f *fakeResolver) LookupTXT(ctx context.Context, name string) ([]string, error) {
	f.asked = append(f.asked, name)
	if f.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if f.err != nil {
		return nil, f.err
	}
	if v, ok := f.txt[name]; ok {
		return v, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
}

var _ TXTResolver = (*fakeResolver)(nil)

func TestCheckDNS(t *testing.T) {
	want := Records{AnswerURL: testURL, CertFingerprint: testFP, Domain: "site.example"}
	const urlName, fpName = "proxmox-auto-installer.site.example.", "proxmox-auto-installer-cert-fingerprint.site.example."
	tests := map[string]struct {
		txt      map[string][]string
		err      error
		required bool
		want     []FindingKind
	}{
		"both records as the window has them":                  {txt: map[string][]string{urlName: {testURL}, fpName: {testFP}}},
		"the fingerprint in lower case without colons matches": {txt: map[string][]string{urlName: {testURL}, fpName: {strings.ToLower(strings.ReplaceAll(testFP, ":", ""))}}},
		"a quoted value is read as the installer reads it":     {txt: map[string][]string{urlName: {`"` + testURL + `"`}, fpName: {testFP}}},
		"no records and a generic ISO staged is missing":       {required: true, want: []FindingKind{FindingMissing}},
		"no records without a generic ISO says nothing":        {},
		"a record naming another window is elsewhere":          {txt: map[string][]string{urlName: {"https://192.0.2.99:8090/answer"}}, want: []FindingKind{FindingElsewhere}},
		"two URL records are not the window's one":             {txt: map[string][]string{urlName: {testURL, "https://192.0.2.99:8090/answer"}, fpName: {testFP}}, want: []FindingKind{FindingElsewhere}},
		"a stale fingerprint":                                  {txt: map[string][]string{urlName: {testURL}, fpName: {strings.Repeat("00:", 31) + "00"}}, want: []FindingKind{FindingFingerprint}},
		"no fingerprint record for an https window":            {txt: map[string][]string{urlName: {testURL}}, want: []FindingKind{FindingFingerprint}},
		"a failing resolver with a generic ISO staged":         {err: errors.New("connection refused"), required: true, want: []FindingKind{FindingLookup}},
		"a failing resolver without one says nothing":          {err: errors.New("connection refused")},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			res := &fakeResolver{txt: tc.txt, err: tc.err}
			got := CheckDNS(context.Background(), res, want, CheckOptions{Required: tc.required})
			var kinds []FindingKind
			for _, f := range got {
				kinds = append(kinds, f.Kind)
				if !strings.Contains(f.String(), f.Name) {
					t.Errorf("finding %q does not name %s", f, f.Name)
				}
			}
			if d := cmp.Diff(tc.want, kinds, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("findings (-want +got):\n%s\n%v", d, got)
			}
			if len(res.asked) == 0 || res.asked[0] != urlName {
				t.Errorf("asked %v; want %s first, absolute", res.asked, urlName)
			}
		})
	}
}

func TestCheckDNSIsBounded(t *testing.T) {
	res := &fakeResolver{block: true}
	start := time.Now()
	got := CheckDNS(context.Background(), res, Records{AnswerURL: testURL, Domain: "site.example"}, CheckOptions{Required: true, Timeout: 50 * time.Millisecond})
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("took %s; want about the 50ms timeout", took)
	}
	if len(got) != 1 || got[0].Kind != FindingLookup || !errors.Is(got[0].Err, context.DeadlineExceeded) {
		t.Errorf("findings %v; want one lookup finding wrapping context.DeadlineExceeded", got)
	}
}

func TestFindingString(t *testing.T) {
	f := Finding{Kind: FindingElsewhere, Name: "proxmox-auto-installer.site.example", Got: "https://old/answer", Want: testURL}
	if s := f.String(); !strings.Contains(s, "https://old/answer") || !strings.Contains(s, testURL) {
		t.Errorf("%q does not name both URLs", s)
	}
}
