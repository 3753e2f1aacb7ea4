package providers_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/providers/manual"
	"github.com/plasmactl/plasma-node/providers/ovh"
)

// named is a provider that is only a name: a set calls nothing else.
type named struct {
	providers.Provider
	name string
}

func (n named) Name() string { return n.name }

func provider(name string) providers.Provider { return named{name: name} }

func TestNewSetRefusesWhatCannotBeLookedUp(t *testing.T) {
	tests := map[string][]providers.Provider{
		"a nil provider":        {&manual.Provider{}, nil},
		"a provider nameless":   {provider("")},
		"a name given twice":    {&manual.Provider{}, provider("manual")},
		"two of the same value": {&ovh.Provider{}, &ovh.Provider{}},
	}
	for name, ps := range tests {
		t.Run(name, func(t *testing.T) {
			if s, err := providers.NewSet(ps...); !errors.Is(err, providers.ErrInvalidInput) {
				t.Errorf("NewSet() = %v, %v; want an error wrapping ErrInvalidInput", s, err)
			}
		})
	}
}

func TestSetGetNamesTheKnownProviders(t *testing.T) {
	full, err := providers.NewSet(provider("zeta"), &manual.Provider{}, provider("alpha"))
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		set       *providers.Set
		name      string
		wantNames []string
		wantErr   *providers.UnknownError
		wantMsg   string
	}{
		"a known name is found": {set: full, name: "manual", wantNames: []string{"alpha", "manual", "zeta"}},
		"an unknown name lists the known ones, sorted": {set: full, name: "gcp", wantNames: []string{"alpha", "manual", "zeta"},
			wantErr: &providers.UnknownError{Name: "gcp", Known: []string{"alpha", "manual", "zeta"}},
			wantMsg: `provider "gcp": unknown provider (known: alpha, manual, zeta)`},
		"the zero set knows none": {set: &providers.Set{}, name: "manual", wantNames: []string{},
			wantErr: &providers.UnknownError{Name: "manual", Known: []string{}}, wantMsg: `provider "manual": unknown provider (known: none)`},
		"a nil set knows none": {set: nil, name: "manual", wantNames: []string{},
			wantErr: &providers.UnknownError{Name: "manual", Known: []string{}}, wantMsg: `provider "manual": unknown provider (known: none)`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.wantNames, tc.set.Names()); diff != "" {
				t.Errorf("Names() (-want +got):\n%s", diff)
			}
			p, err := tc.set.Get(tc.name)
			if tc.wantErr == nil {
				if err != nil || p == nil || p.Name() != tc.name {
					t.Fatalf("Get(%q) = %v, %v; want the provider", tc.name, p, err)
				}
				return
			}
			var ue *providers.UnknownError
			if !errors.As(err, &ue) || !errors.Is(err, providers.ErrUnknown) {
				t.Fatalf("Get(%q) error = %v; want an *UnknownError that is ErrUnknown", tc.name, err)
			}
			if diff := cmp.Diff(tc.wantErr, ue); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantMsg, err.Error()); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetProvidersMakeASetOfTheirOwn(t *testing.T) {
	base, err := providers.NewSet(&manual.Provider{}, &ovh.Provider{})
	if err != nil {
		t.Fatal(err)
	}
	more, err := providers.NewSet(append(base.Providers(), provider("filecloud"))...)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"filecloud", "manual", "ovh"}, more.Names()); diff != "" {
		t.Errorf("Names() (-want +got):\n%s", diff)
	}
}
