package api_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/secret"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// fakePower is an api.Power that records what it was asked.
type fakePower struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakePower) Power(_ context.Context, name, action string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "power "+action+" "+name)
	switch name {
	case "nobmc":
		return "", fmt.Errorf("%s: %w: no BMC registered", name, api.ErrPowerRefused)
	case "deaf":
		return "", fmt.Errorf("%s: %w: BMC refused the credentials: RAKP 2 HMAC is invalid", name, api.ErrBMCFailed)
	}
	return "on", nil
}

func (f *fakePower) Boot(_ context.Context, name string) (api.BootReply, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "boot "+name)
	if name == "done" {
		return api.BootReply{}, fmt.Errorf("boot %s: %w: the registration is installed, not pending", name, api.ErrPowerRefused)
	}
	return api.BootReply{Protocol: "ipmi", Mode: "uefi", Was: "off"}, nil
}

// fakeSecrets is a secret.Store in memory.
type fakeSecrets struct {
	mu        sync.Mutex
	passwords map[string]string
}

func (f *fakeSecrets) StageRootPassword(context.Context, string, string) (secret.Staged, error) {
	return nil, errors.New("not for the API")
}

func (f *fakeSecrets) WriteBMCPassword(_ context.Context, name, pw string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.passwords[name] = pw
	return "memory", nil
}

func (f *fakeSecrets) ReadBMCPassword(_ context.Context, name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	pw, ok := f.passwords[name]
	if !ok {
		return "", fs.ErrNotExist
	}
	return pw, nil
}

func (f *fakeSecrets) RemoveBMCPassword(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.passwords, name)
	return nil
}

func (f *fakeSecrets) kept() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.passwords)
}

func TestPowerAndBoot(t *testing.T) {
	fp := &fakePower{}
	e := newEnv(t, func(c *api.Config) { c.Power = fp })
	none := newEnv(t, nil)
	reg, read := e.tokens["register"], e.tokens["read"]
	tests := []struct {
		name                string
		env                 *env
		method, path, token string
		body                string
		status              int
		has                 string
	}{
		{"boot", e, "POST", "/api/v1/registrations/pve1/boot", reg, "", 200, `"protocol":"ipmi"`},
		{"boot of an installed machine", e, "POST", "/api/v1/registrations/done/boot", reg, "", 409, "installed, not pending"},
		{"boot with a read token", e, "POST", "/api/v1/registrations/pve1/boot", read, "", 403, "needs register"},
		{"power status with a read token", e, "GET", "/api/v1/registrations/pve1/power", read, "", 200, `"power":"on"`},
		{"power on", e, "POST", "/api/v1/registrations/pve1/power", reg, `{"action":"on"}`, 200, `"power":"on"`},
		{"an unknown action", e, "POST", "/api/v1/registrations/pve1/power", reg, `{"action":"explode"}`, 400, "want status, on, off or cycle"},
		{"an unknown field", e, "POST", "/api/v1/registrations/pve1/power", reg, `{"action":"on","force":true}`, 400, "unknown field"},
		{"no BMC", e, "POST", "/api/v1/registrations/nobmc/power", reg, `{"action":"on"}`, 409, "no BMC registered"},
		{"the BMC's words", e, "POST", "/api/v1/registrations/deaf/power", reg, `{"action":"cycle"}`, 502, "RAKP 2 HMAC is invalid"},
		{"a bad name", e, "POST", "/api/v1/registrations/no%20such/boot", reg, "", 400, "name"},
		{"no BMC control", none, "POST", "/api/v1/registrations/pve1/boot", none.tokens["register"], "", 501, "no BMC control"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.env.do(t, tc.method, tc.path, tc.token, tc.body)
			if r.status != tc.status || !strings.Contains(r.body, tc.has) {
				t.Errorf("%s %s: %d %s; want %d with %q", tc.method, tc.path, r.status, r.body, tc.status, tc.has)
			}
		})
	}
	want := []string{"boot pve1", "boot done", "power status pve1", "power on pve1", "power on nobmc", "power cycle deaf"}
	if diff := cmp.Diff(want, fp.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// A registration with a BMC carries its password once: kept in the
// secrets store, never in the registration, the reply, the log or the
// idempotency record.
func TestRegistrationBMCPassword(t *testing.T) {
	fp := &fakeSecrets{passwords: map[string]string{}}
	e := newEnv(t, func(c *api.Config) { c.Power, c.Secrets = &fakePower{}, fp })
	tok := e.tokens["register"]
	const secret = "s3cret-BMC-pw"
	withBMC := `{"name":"pve1","macs":["52:54:00:00:00:01"],"boot_disk":"sda","bmc":{"url":"ipmi://10.0.0.51","user":"admin"}`
	tests := []struct {
		name, body string
		status     int
		field      string
	}{
		{"a BMC needs its password", withBMC + `}`, 422, "bmc_password"},
		{"a password needs a BMC", `{"name":"pve2","macs":["52:54:00:00:00:02"],"bmc_password":"x"}`, 422, "bmc_password"},
		{"an empty password", withBMC + `,"bmc_password":""}`, 400, "bmc_password"},
		{"a bad BMC", `{"name":"pve3","macs":["52:54:00:00:00:03"],"bmc":{"url":"telnet://10.0.0.51","user":"a"},"bmc_password":"x"}`, 422, "bmc"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(t, "POST", "/api/v1/registrations", tok, tc.body)
			if r.status != tc.status || r.err.Field != tc.field {
				t.Errorf("%d %s; want %d on field %s", r.status, r.body, tc.status, tc.field)
			}
		})
	}
	if len(fp.kept()) != 0 {
		t.Fatalf("a refused registration kept a password: %v", fp.kept())
	}
	r := e.do(t, "POST", "/api/v1/registrations", tok, withBMC+`,"bmc_password":"`+secret+`"}`, "Idempotency-Key", "k1")
	if r.status != 201 || strings.Contains(r.body, secret) || !strings.Contains(r.body, `"bmc"`) {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	if fp.kept()["pve1"] != secret {
		t.Errorf("password kept: %v", fp.kept())
	}
	filepath.WalkDir(e.state, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if data, _ := os.ReadFile(path); strings.Contains(string(data), secret) {
				t.Errorf("%s holds the BMC password", path)
			}
		}
		return nil
	})
	if strings.Contains(e.logs.String(), secret) {
		t.Error("the log holds the BMC password")
	}
}

// The BMC password is kept only once its registration is accepted, and
// goes with it: a re-registration refused for a pin conflict (409) keeps
// the earlier password; DELETE removes it.
func TestBMCPasswordFollowsItsRegistration(t *testing.T) {
	fp := &fakeSecrets{passwords: map[string]string{}}
	e := newEnv(t, func(c *api.Config) { c.Power, c.Secrets = &fakePower{}, fp })
	tok := e.tokens["register"]
	bmc := `,"boot_disk":"sda","bmc":{"url":"ipmi://10.0.0.51","user":"admin"},"bmc_password":`
	if r := e.do(t, "POST", "/api/v1/registrations", tok, `{"name":"pve1","macs":["52:54:00:00:00:01"]`+bmc+`"first"}`); r.status != 201 {
		t.Fatalf("create pve1: %d %s", r.status, r.body)
	}
	if r := e.do(t, "POST", "/api/v1/registrations", tok, `{"name":"pve2","macs":["52:54:00:00:00:02"],"boot_disk":"sda"}`); r.status != 201 {
		t.Fatalf("create pve2: %d %s", r.status, r.body)
	}
	// pve1 again, with pve2's MAC: refused, and its password stays.
	if r := e.do(t, "POST", "/api/v1/registrations", tok, `{"name":"pve1","macs":["52:54:00:00:00:02"]`+bmc+`"second"}`); r.status != 409 {
		t.Fatalf("conflicting re-registration: %d %s, want 409", r.status, r.body)
	}
	if got := fp.kept()["pve1"]; got != "first" {
		t.Errorf("after a refused re-registration the password is %q, want the first one", got)
	}
	if r := e.do(t, "DELETE", "/api/v1/registrations/pve1", tok, ""); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if _, ok := fp.kept()["pve1"]; ok {
		t.Error("DELETE left the BMC password behind")
	}
}

// TestBMCPasswordGoesWithItsBMCInASecretsFolder: through the API against
// a real secrets folder, <name>.bmc.pw stays after a refused (409)
// re-registration, goes when the registration is replaced by one
// without a BMC, when another registration takes all its pins (moved and
// removed) and when it is deleted.
func TestBMCPasswordGoesWithItsBMCInASecretsFolder(t *testing.T) {
	ctx := t.Context()
	secrets, err := folder.OpenSecrets(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(c *api.Config) { c.Power, c.Secrets = &fakePower{}, secrets })
	tok := e.tokens["register"]
	kept := func(name string) bool {
		t.Helper()
		_, err := os.Lstat(secrets.BMCPasswordPath(name))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		return err == nil
	}
	post := func(body string, want int) {
		t.Helper()
		if r := e.do(t, "POST", "/api/v1/registrations", tok, body); r.status != want {
			t.Fatalf("POST %s: %d %s, want %d", body, r.status, r.body, want)
		}
	}
	bmc := func(host, pw string) string {
		return `,"boot_disk":"sda","bmc":{"url":"ipmi://` + host + `","user":"admin"},"bmc_password":"` + pw + `"}`
	}
	post(`{"name":"pve1","macs":["52:54:00:00:02:01"]`+bmc("10.0.0.61", "first"), 201)
	post(`{"name":"pve2","macs":["52:54:00:00:02:02"]`+bmc("10.0.0.62", "second"), 201)
	post(`{"name":"pve1","macs":["52:54:00:00:02:02"]`+bmc("10.0.0.61", "other"), 409)
	if pw, err := secrets.ReadBMCPassword(ctx, "pve1"); err != nil || pw != "first" {
		t.Errorf("after a refused re-registration pve1's password is %q (%v), want the first", pw, err)
	}
	post(`{"name":"pve1","macs":["52:54:00:00:02:01"],"boot_disk":"sda"}`, 201)
	if kept("pve1") {
		t.Error("pve1 registered again without a BMC kept its BMC password")
	}
	post(`{"name":"pve3","macs":["52:54:00:00:02:02"],"boot_disk":"sda","replace":true}`, 201)
	if kept("pve2") {
		t.Error("pve2, removed when pve3 took its MAC, kept its BMC password")
	}
	post(`{"name":"pve4","macs":["52:54:00:00:02:04"]`+bmc("10.0.0.64", "fourth"), 201)
	if !kept("pve4") {
		t.Fatal("pve4's password was not kept")
	}
	if r := e.do(t, "DELETE", "/api/v1/registrations/pve4", tok, ""); r.status != 204 {
		t.Fatalf("delete pve4: %d %s", r.status, r.body)
	}
	if kept("pve4") {
		t.Error("DELETE left pve4's BMC password")
	}
}
