package pxe

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store"
	"github.com/plasmactl/plasma-node/pxe/window"
)

func putRegistration(t *testing.T, dir string, r registry.Registration) {
	t.Helper()
	st, err := store.Open(t.Context(), dir, store.Options{SecretsDir: filepath.Join(dir, "secrets")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Registrations().Register(context.Background(), r, registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestADiscoveryWindowRefusesToOpenBesideAnUnpinnedRegistration: a
// pending registration pinning no machine would be met by any stranger,
// so the window does not open and names it.
func TestADiscoveryWindowRefusesToOpenBesideAnUnpinnedRegistration(t *testing.T) {
	dir := t.TempDir()
	putRegistration(t, dir, registry.Registration{Name: "loose", BootDisk: mustDisk(t, "sda")})
	putRegistration(t, dir, registry.Registration{Name: "pinned", MACs: []string{"52:54:00:00:00:01"}, BootDisk: mustDisk(t, "sda")})
	stores, err := store.Open(t.Context(), dir, store.Options{SecretsDir: filepath.Join(dir, "secrets")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = regbackend.Open(context.Background(), stores, regbackend.Options{StateDir: dir, Discover: true})
	var ce *ConfigError
	if !errors.Is(err, regbackend.ErrUnpinnedPending) || !errors.As(err, &ce) || ce.Field != "Discover" || !strings.Contains(err.Error(), "loose") || strings.Contains(err.Error(), "pinned,") {
		t.Errorf("the discovery window's backend = %v, want ErrUnpinnedPending naming loose only", err)
	}
	if _, err := window.Read(dir); err == nil {
		t.Error("a refused window left a record")
	}
}

func TestNewRefusesDiscoveryUnderSecureBoot(t *testing.T) {
	_, err := New(Config{Discover: true, SecureBoot: true, DHCPInterface: "lo", StateDir: t.TempDir()})
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Field != "Discover" {
		t.Errorf("New = %v, want a ConfigError of Discover", err)
	}
}

// TestADiscoveryWindowKeepsReportsInTheStateFolder: a discovery window's
// record says so; a post without its token is refused; the stranger's
// script carries the token, and a post with it lands in the state
// folder's inbox.
func TestADiscoveryWindowKeepsReportsInTheStateFolder(t *testing.T) {
	dir := t.TempDir()
	putRegistration(t, dir, registry.Registration{Name: "pinned", MACs: []string{"52:54:00:00:00:01"}, BootDisk: mustDisk(t, "sda")})
	rel := filepath.Join(dir, "assets", "9.1-1")
	os.MkdirAll(rel, 0o755)
	for _, f := range []string{"linux26", "initrd-netboot.img", discovery.InitrdName} {
		if err := os.WriteFile(filepath.Join(rel, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opened := make(chan *window.Record, 1)
	_, base, _ := start(t, nodeProvisioner(t, Config{StateDir: dir, Discover: true, BaseURL: "http://192.0.2.10:8090",
		OnOpen: func(w *window.Record) { opened <- w }}, filepath.Join(dir, "secrets")))
	<-opened
	w, err := window.Read(dir)
	if err != nil || !w.Discover {
		t.Errorf("window record %+v, %v: want discover", w, err)
	}
	report := `{"nics":[{"mac":"52:54:00:99:00:01"}],"dmi":{"serial":"S1"},"disks":[]}`
	post := func(token string) int {
		req, _ := http.NewRequest(http.MethodPost, base+discovery.PostPath, strings.NewReader(report))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := post(""); got != http.StatusUnauthorized {
		t.Errorf("a post without the token: %d, want 401", got)
	}
	resp, err := http.Get(base + "/boot.ipxe?mac=52:54:00:99:00:01&platform=efi")
	if err != nil {
		t.Fatal(err)
	}
	script, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	_, rest, ok := strings.Cut(string(script), discovery.ArgToken+"=")
	if !ok {
		t.Fatalf("the stranger's script has no token:\n%s", script)
	}
	token, _, _ := strings.Cut(rest, " ")
	if got := post(token); got != http.StatusOK {
		t.Errorf("a post with the script's token: %d, want 200", got)
	}
	st, _ := store.Open(t.Context(), dir, store.Options{})
	inbox, err := st.Discovered()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := discovery.Lookup(context.Background(), inbox, "S1", time.Now()); err != nil {
		t.Errorf("the report is not in the state folder's inbox: %v", err)
	}
}

func mustDisk(t *testing.T, s string) answer.BootDisk {
	t.Helper()
	d, err := registry.ParseBootDisk(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
