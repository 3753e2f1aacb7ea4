package registrar_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/registrar"
)

// TestOpenChoosesOnce: Open is the one choice between a node-provisioner
// on this host and one through its API: a server gives the API's client
// (a token needed, the client's refusals passed on, never a typed nil),
// a folder the Local of it, neither an error.
func TestOpenChoosesOnce(t *testing.T) {
	tests := map[string]struct {
		w       registrar.Where
		want    string
		wantErr error
	}{
		"a server":                 {w: registrar.Where{Server: "https://np.example.com:8443", Token: "t0k", Dir: "/ignored"}, want: "*client.Client"},
		"a folder":                 {w: registrar.Where{Dir: "/srv/np", SecretsDir: "/srv/np-secrets"}, want: "*registrar.Local /srv/np /srv/np-secrets"},
		"a server without a token": {w: registrar.Where{Server: "https://np.example.com", Dir: "/srv/np"}, wantErr: registrar.ErrNoToken},
		"nowhere":                  {w: registrar.Where{}, wantErr: registrar.ErrNowhere},
		"a server over http":       {w: registrar.Where{Server: "http://np.example.com", Token: "t0k"}, want: "error"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r, err := registrar.Open(tc.w)
			var got string
			switch v := r.(type) {
			case *client.Client:
				got = "*client.Client"
			case *registrar.Local:
				got = fmt.Sprintf("*registrar.Local %s %s", v.Dir, v.SecretsDir)
			case nil:
				got = "error"
			}
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || r != nil {
					t.Fatalf("Open = %v, %v; want nil and %v", r, err, tc.wantErr)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Open (-want +got):\n%s", diff)
			}
			if (got == "error") != (err != nil) {
				t.Errorf("Open = %v, %v", r, err)
			}
		})
	}
}
