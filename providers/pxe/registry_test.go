package pxe

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/providers"
)

// A platform whose provisioner is remote goes through the Registry the
// dialer returns, with the location's URL, fingerprint and token.
func TestRemoteLocationUsesTheDialer(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var dialed []providers.Remote
	pv := &Provider{Dial: func(_ context.Context, r providers.Remote, _ *slog.Logger) (Registry, error) {
		dialed = append(dialed, r)
		return &LocalRegistry{Dir: dir}, nil
	}}
	remote := providers.Location{Remote: &providers.Remote{URL: "https://site:8091", Fingerprint: "AA", Token: "t"}}
	in := input(t, "", 1)
	in.Location = remote
	p, err := pv.Plan(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Apply(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := pv.States(ctx, remote)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"metal-control-001": "pending"}, st); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	in = input(t, "", 1, providers.Existing{Pool: "control", Index: 0, ServerID: "52:54:00:00:00:01"})
	in.Location = remote
	gone, err := pv.Remove(ctx, in)
	if err != nil || len(gone) != 1 {
		t.Fatalf("remove: %v %v", gone, err)
	}
	if len(dialed) != 3 || *remote.Remote != dialed[0] {
		t.Errorf("dialed %v, want the location's remote 3 times", dialed)
	}
	// A dialer that fails fails the plan, naming nothing it was not given.
	pv.Dial = func(context.Context, providers.Remote, *slog.Logger) (Registry, error) {
		return nil, errors.New("refused")
	}
	in = input(t, "", 1)
	in.Location = remote
	if _, err := pv.Plan(ctx, in); err == nil {
		t.Error("a plan went on without its registry")
	}
}

func TestLocalRegistryStates(t *testing.T) {
	ctx := context.Background()
	file := t.TempDir() + "/file"
	if err := writeFile(file); err != nil {
		t.Fatal(err)
	}
	if _, err := (&Provider{}).States(ctx, providers.Location{Dir: file}); err == nil {
		t.Error("a state folder that is a file gave states")
	}
	if _, err := (&Provider{}).States(ctx, providers.Location{Dir: t.TempDir() + "/absent"}); !errors.Is(err, providers.ErrNoRecords) {
		t.Errorf("an absent folder: %v, want ErrNoRecords", err)
	}
	st, err := (&Provider{}).States(ctx, providers.Location{Dir: t.TempDir()})
	if err != nil || len(st) != 0 {
		t.Errorf("an empty folder: %v %v", st, err)
	}
}

func writeFile(path string) error { return os.WriteFile(path, nil, 0o600) }

// A hardware list machine's BMC goes into its registration, its password
// (read from the variable the list names) into the secrets folder 0600;
// an unset variable fails the plan, naming it, before anything is
// written.
func TestPlanRegistersTheBMC(t *testing.T) {
	ctx := context.Background()
	dir, secrets := t.TempDir(), t.TempDir()+"/secrets"
	hw := t.TempDir() + "/hw.yaml"
	os.WriteFile(hw, []byte(`machines:
  - macs: ["52:54:00:00:00:01"]
    boot_disk: any
    bmc:
      url: ipmi://10.0.0.51
      user: admin
      password_env: RACK1_BMC_PW
`), 0o644)
	env := map[string]string{}
	pv := &Provider{Getenv: func(k string) string { return env[k] }}
	in := input(t, dir, 1)
	in.HardwareFile, in.SecretsDir = hw, secrets
	if _, err := pv.Plan(ctx, in); err == nil || !strings.Contains(err.Error(), "RACK1_BMC_PW") {
		t.Fatalf("plan without the password: %v, want an error naming RACK1_BMC_PW", err)
	}
	if _, err := os.Stat(dir + "/registrations"); err == nil {
		t.Error("a failed plan wrote registrations")
	}
	env["RACK1_BMC_PW"] = "pw-4711"
	if r := applied(t, pv, in, "metal-control-001"); r.BMC == nil || r.BMC.URL != "ipmi://10.0.0.51" {
		t.Fatalf("registration: %+v", r)
	}
	raw, _ := os.ReadFile(dir + "/registrations/metal-control-001.json")
	if strings.Contains(string(raw), "pw-4711") {
		t.Error("the registration file holds the BMC password")
	}
	fi, err := os.Stat(secrets + "/metal-control-001.bmc.pw")
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("BMC password file: %v %v", fi, err)
	}
}
