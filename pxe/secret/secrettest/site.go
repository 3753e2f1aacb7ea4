package secrettest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/internal/storetest"
	"github.com/plasmactl/plasma-node/pxe/secret"
)

// SiteHarness is the harness of the site secrets' suite ([RunSite]).
type SiteHarness = Harness[secret.Site]

// SiteCheck is one conformance check of [secret.Site].
type SiteCheck = storetest.Check[SiteHarness]

// SiteChecks returns the site secrets' checks.
func SiteChecks() []SiteCheck {
	return []SiteCheck{
		{Name: "SiteRoundTrip", Run: siteRoundTrip},
		{Name: "SiteNamesOnly", Run: siteNamesOnly},
		{Name: "SiteRefusals", Run: siteRefusals},
		{Name: "SiteKeptPrivately", Run: siteKeptPrivately},
		{Name: "SiteConcurrentWriters", Run: siteConcurrentWriters},
	}
}

// RunSite runs every site check as a subtest of t.
func RunSite(t *testing.T, h SiteHarness) { storetest.Run(t, h, SiteChecks()) }

func setSite(t T, s secret.Site, name, value string) {
	t.Helper()
	storetest.NoError(t, s.SetSiteSecret(context.Background(), name, value), "SetSiteSecret "+name)
}

func siteRoundTrip(t T, h SiteHarness) {
	ctx := context.Background()
	s := h.New(t)
	if v, err := s.ReadSiteSecret(ctx, "bmc-admin"); !errors.Is(err, secret.ErrNoSiteSecret) {
		t.Errorf("ReadSiteSecret of none = %q, %v; want ErrNoSiteSecret", v, err)
	}
	setSite(t, s, "bmc-admin", "first-Pa55")
	setSite(t, s, "rack.2_bmc", "other-Pa55")
	if v, err := s.ReadSiteSecret(ctx, "bmc-admin"); err != nil || v != "first-Pa55" {
		t.Errorf("ReadSiteSecret = %q, %v; want the one set", v, err)
	}
	setSite(t, s, "bmc-admin", "second-Pa55")
	if v, err := s.ReadSiteSecret(ctx, "bmc-admin"); err != nil || v != "second-Pa55" {
		t.Errorf("ReadSiteSecret after a second set = %q, %v; want the second", v, err)
	}
	storetest.NoError(t, s.RemoveSiteSecret(ctx, "bmc-admin"), "RemoveSiteSecret")
	if v, err := s.ReadSiteSecret(ctx, "bmc-admin"); !errors.Is(err, secret.ErrNoSiteSecret) {
		t.Errorf("ReadSiteSecret after its removal = %q, %v; want ErrNoSiteSecret", v, err)
	}
	if err := s.RemoveSiteSecret(ctx, "bmc-admin"); !errors.Is(err, secret.ErrNoSiteSecret) {
		t.Errorf("RemoveSiteSecret of none = %v, want ErrNoSiteSecret", err)
	}
	if v, err := s.ReadSiteSecret(ctx, "rack.2_bmc"); err != nil || v != "other-Pa55" {
		t.Errorf("ReadSiteSecret of the other after a removal = %q, %v; want its own", v, err)
	}
	if h.Kept != nil {
		for _, k := range h.Kept(t, s) {
			if strings.Contains(string(k.Data), "Pa55") && !strings.Contains(string(k.Data), "other-Pa55") {
				t.Errorf("a replaced or removed site secret is still kept in %s", k.Where)
			}
		}
	}
}

func siteNamesOnly(t T, h SiteHarness) {
	ctx := context.Background()
	s := h.New(t)
	names, err := s.SiteSecretNames(ctx)
	storetest.NoError(t, err, "SiteSecretNames of none")
	if len(names) != 0 {
		t.Errorf("SiteSecretNames of an empty store = %q, want none", names)
	}
	for _, n := range []string{"zeta", "alpha", "m.2"} {
		setSite(t, s, n, n+"-value-Pa55")
	}
	storetest.NoError(t, s.RemoveSiteSecret(ctx, "m.2"), "RemoveSiteSecret")
	names, err = s.SiteSecretNames(ctx)
	storetest.NoError(t, err, "SiteSecretNames")
	if d := cmp.Diff([]string{"alpha", "zeta"}, names); d != "" {
		t.Errorf("SiteSecretNames (-want +got):\n%s", d)
	}
}

func siteRefusals(t T, h SiteHarness) {
	ctx := context.Background()
	s := h.New(t)
	for _, v := range []string{"", "two\nlines-Pa55", "cr\rline-Pa55", "nul\x00-Pa55", strings.Repeat("long-Pa55", 500)} {
		err := s.SetSiteSecret(ctx, "bmc", v)
		if !errors.Is(err, secret.ErrInvalidPassword) {
			t.Errorf("SetSiteSecret(%.20q) = %v, want ErrInvalidPassword", v, err)
		}
		quoted(t, "SetSiteSecret", err, v)
	}
	for _, name := range []string{"", "../escape", "a/b", "Upper", ".hidden", "a..b", "bmc 1", strings.Repeat("n", 64)} {
		err := s.SetSiteSecret(ctx, name, "bad-name-Pa55")
		if !errors.Is(err, secret.ErrInvalidName) {
			t.Errorf("SetSiteSecret of name %q = %v, want ErrInvalidName", name, err)
		}
		quoted(t, "SetSiteSecret of a bad name", err, "bad-name-Pa55")
		if _, err := s.ReadSiteSecret(ctx, name); !errors.Is(err, secret.ErrInvalidName) {
			t.Errorf("ReadSiteSecret of name %q = %v, want ErrInvalidName", name, err)
		}
	}
	if names, err := s.SiteSecretNames(ctx); err != nil || len(names) != 0 {
		t.Errorf("after refused sets SiteSecretNames = %q, %v; want none kept", names, err)
	}
	if h.Kept != nil {
		for _, k := range h.Kept(t, s) {
			if strings.Contains(string(k.Data), "Pa55") {
				t.Errorf("a refused site secret is kept in %s", k.Where)
			}
		}
	}
}

func siteKeptPrivately(t T, h SiteHarness) {
	if h.Kept == nil {
		t.Logf("no Kept: privacy not checked")
		return
	}
	s := h.New(t)
	setSite(t, s, "bmc", "private-Pa55")
	kept := h.Kept(t, s)
	if len(kept) == 0 {
		t.Fatalf("Kept reports nothing after a site secret was set")
	}
	for _, k := range kept {
		if k.Mode.Perm()&0o077 != 0 {
			t.Errorf("%s is kept with mode %v: group or others may read it; want 0600", k.Where, k.Mode.Perm())
		}
	}
}

func siteConcurrentWriters(t T, h SiteHarness) {
	s := h.New(t)
	raceWriters(t, "own", s.SetSiteSecret, s.ReadSiteSecret)
}
