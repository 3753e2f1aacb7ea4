package registry

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadSite(t *testing.T) {
	tests := map[string]struct {
		content string
		want    Site
		wantErr bool
	}{
		"TAPPaaS site.json keys are read": {
			content: `{"location":{"country":"CH","keyboard":"de-ch","timezone":"Europe/Zurich"},"email":"ops@example.ch","other":1}`,
			want:    Site{Keyboard: "de-ch", Country: "CH", Timezone: "Europe/Zurich", Mailto: "ops@example.ch"},
		},
		"our keys win over TAPPaaS's": {
			content: `{"country":"at","location":{"country":"ch"},"domain":"lab.example","ssh_keys":["ssh-ed25519 AAAA x"]}`,
			want:    Site{Country: "at", Domain: "lab.example", SSHKeys: []string{"ssh-ed25519 AAAA x"}},
		},
		"malformed JSON is an error": {content: `{"country":`, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), SiteFileName)
			os.WriteFile(p, []byte(tc.content), 0o644)
			got, err := loadSite(p)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := loadSite(filepath.Join(t.TempDir(), "none.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if s, err := LoadSiteIfExists(filepath.Join(t.TempDir(), "none.json")); err != nil || !cmp.Equal(s, Site{}) {
		t.Errorf("LoadSiteIfExists of a missing file = %+v, %v", s, err)
	}
}

func TestSiteDefaults(t *testing.T) {
	got := Site{Country: "AT"}.Merge(Site{Domain: "lab.example", Country: "de"}).withDefaults()
	want := Site{Keyboard: DefaultKeyboard, Country: "at", Timezone: DefaultTimezone, Mailto: "root@lab.example", Domain: "lab.example"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
