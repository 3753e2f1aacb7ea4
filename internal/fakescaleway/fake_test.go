package fakescaleway

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFakeRefusesAsTheAPIDoes(t *testing.T) {
	f := Start("secret")
	defer f.Close()
	s := f.AddServer(Server{ID: "11111111-2222-4333-8444-555555555555", Zone: "fr-par-2", Name: "a", OfferID: "a5065ba4-dde2-45f3-adec-1ebbb27b766b"})
	srv := "/baremetal/v1/zones/fr-par-2/servers/" + s.ID
	tests := map[string]struct {
		method, path, body, token string
		code                      int
		want                      map[string]any
	}{
		"a read with the token": {method: "GET", path: srv, token: "secret", code: 200},
		"no token": {method: "GET", path: srv, code: 401,
			want: map[string]any{"message": "authentication is denied", "type": "denied_authentication"}},
		"a wrong token": {method: "GET", path: srv, token: "other", code: 401,
			want: map[string]any{"message": "invalid authentication token", "type": "denied_authentication"}},
		"a server of another zone": {method: "GET", path: "/baremetal/v1/zones/nl-ams-1/servers/" + s.ID, token: "secret", code: 404,
			want: map[string]any{"message": "resource is not found", "type": "not_found", "resource": "baremetal_server", "resource_id": s.ID}},
		"an unknown offer": {method: "GET", path: "/baremetal/v1/zones/fr-par-2/offers/00000000-0000-4000-8000-000000000000", token: "secret", code: 404,
			want: map[string]any{"message": "resource is not found", "type": "not_found", "resource": "baremetal_offer", "resource_id": "00000000-0000-4000-8000-000000000000"}},
		"an unknown property": {method: "PATCH", path: srv, body: `{"hostname":"x"}`, token: "secret", code: 400},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, f.Endpoint()+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.token != "" {
				req.Header.Set("X-Auth-Token", tc.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.code {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, b, tc.code)
			}
			if tc.want == nil {
				return
			}
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("error body (-want +got):\n%s", diff)
			}
		})
	}
}
