package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/e2e/internal/answerclient"
)

// TestAnswerJSONForThe92Installer: node-provisioner serve answers an
// installer emulator claiming 9.2, which sends the real Accept header, with
// JSON that means what the TOML answer means (the same model after
// decoding, but for the per-answer secrets and the node's name); an
// emulator claiming 8.4 gets TOML.
func TestAnswerJSONForThe92Installer(t *testing.T) {
	state, home := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519.pub"), []byte("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGzx6HqSm1mQ3VcLaZ3r0ZKtgtF5wVbUEjS0Xv5R5N5g op@e2e\n"), 0o644)
	env := append(os.Environ(), "HOME="+home, "NODE_PROVISIONER_STATE_DIR="+state)
	npc := func(ctx context.Context, args ...string) *exec.Cmd {
		c := exec.CommandContext(ctx, filepath.Join(bin, "node-provisioner"), args...)
		c.Env = env
		return c
	}
	macs := map[string]string{"json": "52:54:00:00:36:01", "toml": "52:54:00:00:36:02", "old": "52:54:00:00:36:03"}
	for name, mac := range macs {
		if out, err := npc(context.Background(), "register", "pve-"+name, "--mac", mac, "--boot-disk", "sda").CombinedOutput(); err != nil {
			t.Fatalf("register: %v\n%s", err, out)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	serve := npc(ctx, "serve", "--http", "127.0.0.1:0", "--ttl", "1m", "--domain", "e2e.test")
	url, _ := startServe(t, serve)
	sysinfo := func(release, mac string) []byte {
		return fmt.Appendf(nil, `{"$schema":{"version":"1.0"},"product":{"fullname":"Proxmox VE","product":"pve","enable_btrfs":true},`+
			`"iso":{"release":%q,"isorelease":"1"},"dmi":{"system":{"uuid":"bcf43ddf-6d92-4ace-b93f-76f71ffe4495"}},`+
			`"network_interfaces":[{"link":"enp1s0","mac":%q}]}`, release, strings.ToUpper(mac))
	}

	js, err := answerclient.Fetch(ctx, http.DefaultClient, url, answer.Version92, sysinfo("9.2", macs["json"]), "")
	if err != nil {
		t.Fatalf("the 9.2 emulator: %v", err)
	}
	if !js.JSON || js.ContentType != "application/json" || !bytes.Contains(js.Raw, []byte(`"disk-setup":{`)) {
		t.Fatalf("the 9.2 emulator got %q, JSON %t:\n%s", js.ContentType, js.JSON, js.Raw)
	}

	// The same request without the Accept header gets TOML: the meaning
	// to compare with.
	resp, err := http.Post(url, "application/json; charset=utf-8", bytes.NewReader(sysinfo("9.2", macs["toml"])))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/toml" {
		t.Fatalf("9.2 without Accept: %d %q\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
	}
	toml, err := answer.Decode(raw, answer.Version92)
	if err != nil {
		t.Fatalf("the TOML answer: %v\n%s", err, raw)
	}
	if diff := cmp.Diff(meaning(toml), meaning(js.Answer)); diff != "" {
		t.Errorf("the JSON answer means something else than the TOML one (-toml +json):\n%s", diff)
	}

	old, err := answerclient.Fetch(ctx, http.DefaultClient, url, answer.Version84, sysinfo("8.4", macs["old"]), "")
	if err != nil {
		t.Fatalf("the 8.4 emulator: %v", err)
	}
	if old.JSON || old.ContentType != "application/toml" || old.Answer.Global.FQDN.Name != "pve-old.e2e.test" {
		t.Errorf("the 8.4 emulator got %q (JSON %t) for %q", old.ContentType, old.JSON, old.Answer.Global.FQDN.Name)
	}
}

// meaning is a's content without what differs between two nodes'
// answers: the name, the root password, and the one-shot tokens of the
// first-boot and webhook URLs and of the webhook's auth-token.
func meaning(a *answer.Answer) *answer.Answer {
	b := *a
	b.Global.FQDN.Name = strings.TrimPrefix(strings.TrimPrefix(b.Global.FQDN.Name, "pve-json"), "pve-toml")
	b.Global.RootPassword, b.Global.RootPasswordHashed = "", ""
	cut := func(u string) string { return u[:strings.LastIndex(u, "/")+1] }
	if fb := b.FirstBoot; fb != nil {
		c := *fb
		c.URL, b.FirstBoot = cut(c.URL), &c
	}
	if wh := b.PostInstallationWebhook; wh != nil {
		c := *wh
		c.URL, c.AuthToken, b.PostInstallationWebhook = cut(c.URL), "", &c
	}
	return &b
}
