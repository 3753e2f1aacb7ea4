package nodes

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzLoadPlatform writes bytes as a platform.yaml and loads it through
// the Store, as every plasma-node command does. A file that does not load
// is refused with an error wrapping ErrMalformed that names the file; one
// that loads has a name, redacts every literal credential without touching
// the original, and survives UpdatePlatform: a rewrite that sets the
// description and adds a pool loads again to exactly that change.
// Seeds: testdata/fuzz/FuzzLoadPlatform and the platform files of testdata.
func FuzzLoadPlatform(f *testing.F) {
	for _, name := range []string{"anchor-platform.yaml", "created-platform.golden"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		s := Open(dir, Options{})
		file := filepath.Join(dir, PlatformsDir, "fz", platformFile)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := s.Platform(ctx, "fz")
		if err != nil {
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), platformFile) {
				t.Fatalf("load error %q does not wrap ErrMalformed or does not name %s\ninput:\n%s", err, platformFile, data)
			}
			return
		}
		if p.Name == "" {
			t.Fatalf("loaded platform has no name\ninput:\n%s", data)
		}

		before := clonePlatform(p)
		r := p.Redacted()
		for _, a := range []API{r.Infrastructure.API, r.DNS.API} {
			for _, v := range []string{a.Token, a.ClientID, a.ClientSecret, a.AccessKey, a.SecretKey} {
				if v != "" && v != Redacted && !IsKeyringRef(v) {
					t.Fatalf("Redacted kept the credential %q\ninput:\n%s", v, data)
				}
			}
		}
		if diff := cmp.Diff(before, p, cmpopts.IgnoreUnexported(Platform{})); diff != "" {
			t.Fatalf("Redacted changed the platform (-before +after):\n%s", diff)
		}

		want := clonePlatform(p)
		want.Description = "fuzz: rewritten"
		if want.Pools == nil {
			want.Pools = map[string]Pool{}
		}
		want.Pools["fuzz-added"] = Pool{Zones: []string{addedZone}, Machine: "m1", Count: 2}
		got, err := s.UpdatePlatform(ctx, "fz", func(q *Platform) error {
			q.Description = want.Description
			if q.Pools == nil {
				q.Pools = map[string]Pool{}
			}
			q.Pools["fuzz-added"] = want.Pools["fuzz-added"]
			return nil
		})
		if err != nil {
			t.Fatalf("update of a loaded platform failed: %v\ninput:\n%s", err, data)
		}
		again, err := s.Platform(ctx, "fz")
		if err != nil {
			out, _ := os.ReadFile(file)
			t.Fatalf("rewritten platform does not load: %v\ninput:\n%s\noutput:\n%s", err, data, out)
		}
		opts := cmp.Options{cmpopts.IgnoreUnexported(Platform{}), cmpopts.EquateEmpty()}
		if diff := cmp.Diff(want, got, opts); diff != "" {
			t.Fatalf("UpdatePlatform returned (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want, again, opts); diff != "" {
			out, _ := os.ReadFile(file)
			t.Fatalf("round trip changed the platform (-want +got):\n%s\ninput:\n%s\noutput:\n%s", diff, data, out)
		}
	})
}
