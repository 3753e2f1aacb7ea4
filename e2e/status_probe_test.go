package e2e

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/answer"
)

// TestNoUnauthenticatedPathShowsAnIdentifier probes a discovery window
// of node-provisioner serve holding a machine of every kind (pending
// with every pin and a static address, refused though registered,
// installed with its report, discovered, and a stranger) on every path
// a client reaches without a token: the page, GET /status, /timeline,
// /metrics, /events, the boot scripts and every boot asset. No body may
// hold a full MAC, serial, UUID or address of the registrations, the
// install report or the discovered machine, in any case or spelling.
func TestNoUnauthenticatedPathShowsAnIdentifier(t *testing.T) {
	e := newProvisionerEnv(t)
	const (
		pendingMAC = "52:54:00:7a:01:01"
		refusedMAC = "52:54:00:de:ad:02"
		strangeMAC = "52:54:00:99:00:07"
		foundMAC   = "52:54:00:99:00:08"
	)
	e.run(t, "register", "pve1", "--mac", pendingMAC, "--serial", "SRV-PIN-000417", "--uuid", "4c4c4544-0042-3510-8052-b4c04f4e3032",
		"--boot-disk", "sda", "--address", "10.20.0.11/24", "--gateway", "10.20.0.1", "--dns", "10.20.0.53")
	e.run(t, "register", "pve2", "--mac", refusedMAC, "--boot-disk", "sda")
	e.run(t, "register", "pve9", "--mac", "52:54:00:ba:5e:11", "--boot-disk", "nvme0n1")
	rel := filepath.Join(e.state, "assets", "9.2-1")
	os.MkdirAll(rel, 0o755)
	assets := []string{"linux26", "initrd-netboot.img", "discovery.img"}
	for _, f := range assets {
		if err := os.WriteFile(filepath.Join(rel, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	url, _ := e.serve(t, "--discover")
	base := strings.TrimSuffix(url, "/answer")
	client := &http.Client{Timeout: 10 * time.Second}
	do := func(method, u, token, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, u, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "answer", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	// pve1 boots as far as its kernel; pve2's installer is refused.
	do("GET", base+"/boot.ipxe?mac="+pendingMAC, "", "")
	do("GET", base+"/assets/9.2-1/linux26?mac="+pendingMAC, "", "")
	refused := `{"product":{"fullname":"Proxmox Backup Server","product":"pbs"},"iso":{"release":"9.2"},"network_interfaces":[{"link":"e","mac":"` + strings.ToUpper(refusedMAC) + `"}]}`
	if s, b := do("POST", url, "", refused); s != 400 {
		t.Fatalf("pve2's refused answer: %d %s", s, b)
	}
	// pve9 installs and reports.
	s, body := do("POST", url, "", read("sysinfo/pve-9.2-synthetic.json"))
	if s != 200 {
		t.Fatalf("pve9's answer: %d %s", s, body)
	}
	a, err := answer.Decode([]byte(body), answer.Version92)
	if err != nil || a.PostInstallationWebhook == nil {
		t.Fatalf("pve9's answer: %v\n%s", err, body)
	}
	// The installer sends the answer's webhook auth-token back as "token".
	hook := strings.Replace(read("webhook/pve-9.2-synthetic.json"), `"np1:notasecret"`, `"`+a.PostInstallationWebhook.AuthToken+`"`, 1)
	if s, b := do("POST", a.PostInstallationWebhook.URL, "", hook); s != 200 {
		t.Fatalf("pve9's webhook: %d %s", s, b)
	}
	// A stranger boots into discovery and reports.
	_, script := do("GET", base+"/boot.ipxe?mac="+foundMAC+"&platform=efi", "", "")
	_, rest, ok := strings.Cut(script, "plasma.discover.token=")
	if !ok {
		t.Fatalf("a stranger's script carries no token:\n%s", script)
	}
	token, _, _ := strings.Cut(rest, " ")
	report := `{"nics":[{"mac":"` + foundMAC + `","link":"up"}],"dmi":{"serial":"DISC-SERIAL-0815","uuid":"9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"},` +
		`"disks":[{"name":"nvme0n1","size_bytes":4294967296,"serial":"NV-DISK-0042","wwn":"eui.0025385b71b12345","transport":"nvme"}]}`
	if s, b := do("POST", base+"/discovery", token, report); s/100 != 2 {
		t.Fatalf("the discovery report: %d %s", s, b)
	}
	do("GET", base+"/boot.ipxe?mac="+strangeMAC, "", "")

	identifiers := []string{
		pendingMAC, refusedMAC, strangeMAC, foundMAC, "52:54:00:ba:5e:11", "52:54:00:ba:5e:12",
		"SRV-PIN-000417", "4c4c4544-0042-3510-8052-b4c04f4e3032", "10.20.0.11",
		"BCF43DDF-6D92-4ACE-B93F-76F71FFE4495", "192.0.2.41", "25414A800205", "4f3c2b1a09f8e7d6c5b4a39281706f5e",
		"DISC-SERIAL-0815", "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", "NV-DISK-0042", "eui.0025385b71b12345",
	}
	paths := []string{"/", "/status", "/timeline", "/metrics", "/events", "/boot.ipxe", "/boot.ipxe?platform=efi", "/boot.grub", "/grub/grub.cfg",
		"/answer", "/discovery", "/first-boot/x", "/webhook/x", "/nope"}
	for _, f := range assets {
		paths = append(paths, "/assets/9.2-1/"+f, "/assets/9.2-1/"+f+"?mac="+pendingMAC)
	}
	for _, p := range paths {
		status, body := do("GET", base+p, "", "")
		for _, id := range identifiers {
			for _, form := range []string{id, strings.ToLower(id), strings.ToUpper(id), strings.ReplaceAll(id, ":", "-")} {
				if strings.Contains(body, form) {
					t.Errorf("GET %s (%d) shows %q in full:\n%.3000s", p, status, form, body)
				}
			}
		}
		// The window's own address is in its scripts; pve9's installer
		// came from it too (its install IP), which the status must mask.
		if (p == "/" || p == "/status" || p == "/timeline") && strings.Contains(body, "127.0.0.1") {
			t.Errorf("GET %s shows pve9's install address 127.0.0.1 in full:\n%.3000s", p, body)
		}
	}
	// What the page and the status show instead: the tails.
	_, page := do("GET", base+"/", "", "")
	for _, tail := range []string{"…:01:01", "…:ad:02", "…:00:07", "….41"} {
		if !strings.Contains(page, tail) {
			t.Errorf("the page lacks the tail %q", tail)
		}
	}
	if _, st := do("GET", base+"/status", "", ""); !strings.Contains(st, "…0205") || !strings.Contains(st, "…0417") {
		t.Errorf("GET /status lacks the tails of pve9's disk serial and pve1's pinned serial:\n%s", st)
	}
}
