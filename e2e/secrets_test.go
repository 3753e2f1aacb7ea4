package e2e

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/answer"
)

// TestSecretsStayInTheSecretFile runs a full flow for an 8.2 and a 9.2
// installer (answer, first-boot script, webhook, refused requests, list,
// status) and fails if a generated password appears anywhere but its
// secret file and, for 8.2, which has no hashed password, the answer body.
func TestSecretsStayInTheSecretFile(t *testing.T) {
	e := newProvisionerEnv(t)
	e.run(t, "register", "pve8", "--mac", "bc:24:11:d5:36:d1", "--boot-disk", "sda")
	e.run(t, "register", "pve9", "--mac", "52:54:00:ba:5e:11", "--boot-disk", "nvme0n1", "--pool", "tank=single:nvme1n1")
	url, logs := e.serve(t, "--log-format", "json")
	base := strings.TrimSuffix(url, "/answer")

	// seen is every text the operator or a client can see, by where it
	// came from.
	seen := map[string]string{}
	client := &http.Client{Timeout: 10 * time.Second}
	do := func(label, method, u, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, u, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var hdr bytes.Buffer
		resp.Header.Write(&hdr)
		seen[label] = hdr.String() + string(b)
		return resp.StatusCode, string(b)
	}
	sysinfo := func(name string) string {
		b, err := os.ReadFile("../answer/testdata/sysinfo/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	status, body82 := do("8.2 answer", "POST", url, sysinfo("pve-8.2-2.json"))
	if status != 200 {
		t.Fatalf("8.2 answer: %d %s", status, body82)
	}
	delete(seen, "8.2 answer") // it carries the plain password by design
	status, body92 := do("9.2 answer", "POST", url, sysinfo("pve-9.2-synthetic.json"))
	if status != 200 {
		t.Fatalf("9.2 answer: %d %s", status, body92)
	}
	a, err := answer.Decode([]byte(body92), answer.Version92)
	if err != nil {
		t.Fatalf("9.2 answer: %v\n%s", err, body92)
	}
	if a.FirstBoot == nil || a.PostInstallationWebhook == nil {
		t.Fatalf("the 9.2 answer has no first-boot or webhook URL:\n%s", body92)
	}
	if s, b := do("first-boot script", "GET", a.FirstBoot.URL, ""); s != 200 {
		t.Errorf("first-boot script: %d %s", s, b)
	}
	if s, b := do("webhook", "POST", a.PostInstallationWebhook.URL, `{"fqdn":"pve9.e2e.test"}`); s != 200 {
		t.Errorf("webhook: %d %s", s, b)
	}

	// Refused requests: their messages must not carry a secret either.
	refused := map[string]struct{ method, url, body string }{
		"second 8.2 answer":          {"POST", url, sysinfo("pve-8.2-2.json")},
		"second 9.2 answer":          {"POST", url, sysinfo("pve-9.2-synthetic.json")},
		"answer by GET":              {"GET", url, ""},
		"answer of a wrong type":     {"POST", url, `[]`},
		"answer with a bad bootdisk": {"POST", url + "?bootdisk=../../x", sysinfo("pve-9.2-synthetic.json")},
		"second first-boot fetch":    {"GET", a.FirstBoot.URL, ""},
		"second webhook":             {"POST", a.PostInstallationWebhook.URL, "{}"},
		"webhook by GET":             {"GET", a.PostInstallationWebhook.URL, ""},
		"unknown token":              {"GET", base + "/first-boot/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", ""},
		"unknown endpoint":           {"GET", base + "/secrets/pve9.pw", ""},
		"status endpoint":            {"GET", base + "/status", ""},
	}
	for label, r := range refused {
		do(label, r.method, r.url, r.body)
	}

	for _, args := range [][]string{{"list"}, {"list", "-o", "json"}} {
		seen["node-provisioner "+strings.Join(args, " ")] = e.run(t, args...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, _ := e.cmd(ctx, "status").CombinedOutput() // its exit code follows the window
	seen["node-provisioner status"] = string(out)
	out, _ = e.cmd(ctx, "register", "pve9", "--mac", "not-a-mac").CombinedOutput()
	seen["refused register"] = string(out)
	out, _ = e.cmd(ctx, "unregister", "pve9").CombinedOutput()
	seen["unregister of a consumed node"] = string(out)

	logs.stop()
	seen["serve stderr"] = logs.String()
	if !strings.Contains(logs.String(), "answer served") {
		t.Errorf("serve's log does not record the answers:\n%s", logs.String())
	}

	// Every file in the state folder and the home folder, events.jsonl and
	// the served one-shot files included.
	for _, root := range []string{e.state, e.home} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Errorf("read %s: %v", p, err)
				return nil
			}
			rel, _ := filepath.Rel(filepath.Dir(root), p)
			seen["file "+rel] = string(b)
			return nil
		})
	}
	if _, ok := seen["file state/events.jsonl"]; !ok {
		t.Errorf("no events.jsonl in the state folder")
	}

	// The secrets: 0600 files in a 0700 folder, one per answered node.
	fi, err := os.Stat(e.secrets)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("secrets folder mode %v, want 0700", fi.Mode().Perm())
	}
	entries, err := os.ReadDir(e.secrets)
	if err != nil {
		t.Fatal(err)
	}
	passwords := map[string]string{}
	for _, ent := range entries {
		info, err := ent.Info()
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o600 || !info.Mode().IsRegular() {
			t.Errorf("secret %s mode %v, want a 0600 file", ent.Name(), info.Mode())
		}
		b, err := os.ReadFile(filepath.Join(e.secrets, ent.Name()))
		if err != nil {
			t.Fatal(err)
		}
		passwords[ent.Name()] = strings.TrimSpace(string(b))
	}
	pw8, pw9 := passwords["pve8.pw"], passwords["pve9.pw"]
	if len(passwords) != 2 || len(pw8) < 20 || len(pw9) < 20 {
		t.Fatalf("secrets %v, want pve8.pw and pve9.pw with a password each", entries)
	}
	if !strings.Contains(body82, pw8) {
		t.Errorf("the 8.2 answer does not carry pve8's password (it has no hashed form)")
	}
	if !answer.CheckPassword(a.Global.RootPasswordHashed, pw9) {
		t.Errorf("the 9.2 answer's hash does not match pve9.pw")
	}
	seen["9.2 answer"] = body92
	for label, text := range seen {
		for name, pw := range passwords {
			if strings.Contains(text, pw) {
				t.Errorf("%s's password appears in %s", name, label)
			}
		}
	}
	t.Logf("%d texts scanned for 2 passwords", len(seen))
	if len(seen) < 20 {
		t.Errorf("only %d texts scanned, the flow did not run through", len(seen))
	}
}
