package plasmanode

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
)

func TestProvisioner(t *testing.T) {
	p := &Project{Store: nodes.Open("/proj", nodes.Options{})}
	api := func(url, fp, token string) *nodes.Platform {
		return &nodes.Platform{Name: "metal", Infrastructure: nodes.Infrastructure{MetalProvider: "pxe", ProvisionerURL: url, ProvisionerFingerprint: fp, ProvisionerToken: token, ProvisionerDir: "np"}}
	}
	const fp = "AA:BB"
	tests := map[string]struct {
		plat     *nodes.Platform
		explicit string
		token    string
		envFP    string
		want     providers.Location
		wantErr  error
		errHas   string
	}{
		"the API with the token from the environment": {plat: api("https://site:8091", fp, ""), token: "t0k",
			want: providers.Location{Remote: &providers.Remote{URL: "https://site:8091", Fingerprint: fp, Token: "t0k"}}},
		"the fingerprint from the environment when the file has none": {plat: api("https://site:8091", "", ""), token: "t0k", envFP: "CC:DD",
			want: providers.Location{Remote: &providers.Remote{URL: "https://site:8091", Fingerprint: "CC:DD", Token: "t0k"}}},
		"an explicit folder keeps the local case": {plat: api("https://site:8091", fp, ""), explicit: "/flag", want: providers.Location{Dir: "/flag"}},
		"no API: the platform's folder":           {plat: api("", "", ""), want: providers.Location{Dir: "/proj/np"}},
		"no token":                                {plat: api("https://site:8091", fp, ""), wantErr: providers.ErrNoCredentials, errHas: envProvisionerToken},
		"a token in platform.yaml is refused": {plat: api("https://site:8091", fp, "literal-secret"), token: "t0k", wantErr: ErrInvalidProvisioner,
			errHas: "infrastructure.provisioner_token"},
		"plain http is refused":             {plat: api("http://site:8091", fp, ""), token: "t0k", wantErr: ErrInvalidProvisioner, errHas: "want https://HOST[:PORT]"},
		"a URL with credentials is refused": {plat: api("https://u:p@site:8091", fp, ""), token: "t0k", wantErr: ErrInvalidProvisioner},
		"a fingerprint without a URL":       {plat: api("", fp, ""), wantErr: ErrInvalidProvisioner, errHas: "provisioner_fingerprint"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Setenv(EnvProvisionerDir, "")
			t.Setenv(envProvisionerSecretsDir, "")
			t.Setenv(envProvisionerToken, tc.token)
			t.Setenv(envProvisionerFingerprint, tc.envFP)
			got, err := p.Provisioner(tc.plat, tc.explicit)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("err = %v, want %v containing %q", err, tc.wantErr, tc.errHas)
				}
				if strings.Contains(err.Error(), "literal-secret") || strings.Contains(err.Error(), "t0k") {
					t.Errorf("the error shows the token: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Provisioner (-want +got):\n%s", diff)
			}
		})
	}
}

// With no provisioner configured and node-provisioner's default folder
// absent, list says where install states would come from rather than
// calling every node unregistered.
func TestListSaysWhereStatesWouldComeFrom(t *testing.T) {
	ctx := context.Background()
	var logs bytes.Buffer
	p, err := OpenProject(ctx, t.TempDir(), Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Scaffold(ctx, ScaffoldOptions{Platform: "metal", Provider: "pxe"}); err != nil {
		t.Fatal(err)
	}
	if err := p.Store.CreateNode(ctx, &nodes.Node{Platform: "metal", Hostname: "metal-control-001", Network: nodes.Network{PublicIP: "10.0.0.5"},
		ProviderMetadata: nodes.ProviderMetadata{Provider: "pxe", ServerID: "52:54:00:00:00:01"}}); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvProvisionerDir, filepath.Join(t.TempDir(), "absent"))
	ns, err := p.List(ctx, ListOptions{Platform: "metal"})
	if err != nil || len(ns) != 1 {
		t.Fatalf("list: %v %v", ns, err)
	}
	if ns[0].InstallState != StateUnknown {
		t.Errorf("state = %q, want %q", ns[0].InstallState, StateUnknown)
	}
	if !strings.Contains(logs.String(), "provisioner_url") {
		t.Errorf("the warning does not say where states would come from:\n%s", logs.String())
	}
}
