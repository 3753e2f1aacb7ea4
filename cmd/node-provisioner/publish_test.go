package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/badinput"
	"github.com/plasmactl/plasma-node/pxe/window"
)

const pubFP = "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89"

func TestPublishPrintsTheSiteLines(t *testing.T) {
	state := t.TempDir()
	tests := map[string]struct {
		args     []string
		code     int
		want     string // in stdout (0) or stderr (2)
		wantNone string
	}{
		"dnsmasq lines for an http URL": {args: []string{"--answer-url", "http://10.0.0.2:8090/answer", "--search-domain", "site.example", "--format", "dnsmasq"},
			want: "dhcp-option=250,\"http://10.0.0.2:8090/answer\"\n", wantNone: "dhcp-option=251"},
		"a fingerprint given is written in the installer's form": {args: []string{"--answer-url", "https://10.0.0.2:8090/answer", "--cert-fingerprint", strings.ToLower(pubFP), "--search-domain", "site.example", "--format", "zone"},
			want: "proxmox-auto-installer-cert-fingerprint.site.example. 300 IN TXT \"" + pubFP + "\""},
		"the search domain defaults to the site's": {args: []string{"--answer-url", "http://10.0.0.2:8090/answer", "--format", "dnsmasq-txt"},
			want: "txt-record=proxmox-auto-installer.mgmt.internal,\"http://10.0.0.2:8090/answer\""},
		"every format by default":                               {args: []string{"--answer-url", "http://10.0.0.2:8090/answer"}, want: "Number 250, Type Text"},
		"no window and no URL is a usage error naming the flag": {code: 2, want: "--answer-url: no window is open"},
		"an unknown format":                                     {args: []string{"--answer-url", "http://10.0.0.2:8090/answer", "--format", "bind"}, code: 2, want: "--format: unknown site configuration format \"bind\": want one of dnsmasq"},
		"a bad search domain":                                   {args: []string{"--answer-url", "http://10.0.0.2:8090/answer", "--search-domain", "a_b"}, code: 2, want: "--search-domain: search domain cannot be published: \"a_b\""},
		"a fingerprint for http":                                {args: []string{"--answer-url", "http://10.0.0.2:8090/answer", "--cert-fingerprint", pubFP}, code: 2, want: "--cert-fingerprint: certificate fingerprint cannot be published"},
		"--ipv6-boot: dnsmasq's lines for iPXE": {args: []string{"--ipv6-boot", "http://[2001:db8::2]:8090", "--format", "dnsmasq"},
			want: "dhcp-userclass=set:ipxe6,iPXE\ndhcp-option=tag:ipxe6,option6:bootfile-url,http://[2001:db8::2]:8090/boot.ipxe\n", wantNone: "250"},
		"--ipv6-boot: the three servers' by default": {args: []string{"--ipv6-boot", "http://[2001:db8::2]:8090"}, want: "Bootfile URL http://[2001:db8::2]:8090/boot.ipxe"},
		"--ipv6-boot: a link-local window":           {args: []string{"--ipv6-boot", "http://[fe80::2]:8090"}, code: 2, want: "--ipv6-boot: window URL cannot be published: \"http://[fe80::2]:8090\": fe80::2 is a link-local address"},
		"--ipv6-boot: a DNS format":                  {args: []string{"--ipv6-boot", "http://[2001:db8::2]:8090", "--format", "zone"}, code: 2, want: "--format: unknown site configuration format \"zone\": IPv6 boot lines are written for dnsmasq, kea and opnsense"},
		"a comma in the answer URL":                  {args: []string{"--answer-url", "http://10.0.0.2:8090/a,b"}, code: 2, want: "--answer-url: answer URL cannot be published"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := np(t, state, append([]string{"publish"}, tc.args...)...)
			out := r.stdout
			if tc.code != 0 {
				out = r.err
			}
			if r.code != tc.code || !strings.Contains(out, tc.want) || (tc.wantNone != "" && strings.Contains(out, tc.wantNone)) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d with %q", r.code, r.stdout, r.err, tc.code, tc.want)
			}
		})
	}
}

// TestPublishTakesTheOpenWindow: without --answer-url, the open window's
// URL and certificate fingerprint.
func TestPublishTakesTheOpenWindow(t *testing.T) {
	state := t.TempDir()
	if err := window.Write(state, &window.Record{PID: os.Getpid(), HTTP: "10.0.0.2:8090", URL: "https://10.0.0.2:8090/answer", CertFingerprint: pubFP,
		Started: time.Now(), Deadline: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	r := np(t, state, "publish", "--format", "dnsmasq", "--search-domain", "site.example")
	want := "dhcp-option=250,\"https://10.0.0.2:8090/answer\"\ndhcp-option=251,\"" + pubFP + "\"\n"
	if r.code != 0 || !strings.HasSuffix(r.stdout, want) {
		t.Errorf("exit %d, stdout %q, stderr %q; want %q", r.code, r.stdout, r.err, want)
	}
}

func TestPrepareGenericRefusesAURL(t *testing.T) {
	r := np(t, t.TempDir(), "prepare", "--iso", "x.iso", "--generic", "--answer-url", "http://10.0.0.2:8090/answer")
	if r.code != 2 || !strings.Contains(r.err, "--generic with --answer-url") {
		t.Errorf("exit %d, stderr %q; want 2 naming both flags", r.code, r.err)
	}
}

// txtMap is a TXT resolver answering from a map.
type txtMap map[string][]string

func (m txtMap) LookupTXT(_ context.Context, name string) ([]string, error) {
	if v, ok := m[name]; ok {
		return v, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
}

// statusWith runs status with the TXT resolver res.
func statusWith(t *testing.T, state string, res txtMap, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	a := &app{out: &out, errw: &errb, resolver: res}
	a.logging.Voice = "node-provisioner"
	root := newRoot(a, &out, &errb)
	root.SetArgs(append([]string{"--state-dir", state, "--secrets-dir", filepath.Join(state, "secrets"), "status"}, args...))
	err := root.ExecuteContext(context.Background())
	code := 0
	if err != nil {
		code = 1
	}
	return result{code, out.String(), errb.String()}
}

// TestStatusChecksTheSiteRecords: with a generic release staged, status
// warns when the TXT record is missing or points elsewhere, or the
// fingerprint differs; without one, only a record that exists and
// differs, or any under --search-domain.
func TestStatusChecksTheSiteRecords(t *testing.T) {
	const url = "https://10.0.0.2:8090/answer"
	const urlName, fpName = "proxmox-auto-installer.mgmt.internal.", "proxmox-auto-installer-cert-fingerprint.mgmt.internal."
	newState := func(t *testing.T, generic bool) string {
		state := t.TempDir()
		if err := window.Write(state, &window.Record{PID: os.Getpid(), HTTP: "10.0.0.2:8090", URL: url, CertFingerprint: pubFP,
			Started: time.Now(), Deadline: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if generic {
			dir := filepath.Join(state, "assets", "9.2-1-generic")
			os.MkdirAll(dir, 0o755)
			os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(`{"format":1,"name":"9.2-1-generic","source_iso":"x.iso","source_sha256":"00","fetch_mode":"http",
				"ask_patched":false,"created":"2026-12-06T00:00:00Z","assets":[{"name":"linux26","size":1,"sha256":"`+strings.Repeat("0", 64)+`"}]}`), 0o644)
		}
		return state
	}
	tests := map[string]struct {
		generic bool
		res     txtMap
		args    []string
		want    string // "" wants no warning
	}{
		"generic staged, no record":            {generic: true, want: "DNS TXT proxmox-auto-installer.mgmt.internal: no record"},
		"generic staged, records right":        {generic: true, res: txtMap{urlName: {url}, fpName: {pubFP}}},
		"generic staged, another window's URL": {generic: true, res: txtMap{urlName: {"https://10.0.0.9:8090/answer"}}, want: `"https://10.0.0.9:8090/answer", not the window's answer URL`},
		"generic staged, a stale fingerprint":  {generic: true, res: txtMap{urlName: {url}, fpName: {strings.Repeat("00:", 31) + "00"}}, want: "not the window's certificate " + pubFP},
		"no generic release, no record":        {},
		"no generic release, --search-domain":  {res: txtMap{"proxmox-auto-installer.site.example.": {"http://old/answer"}}, args: []string{"--search-domain", "site.example"}, want: `"http://old/answer", not the window's`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := statusWith(t, newState(t, tc.generic), tc.res, tc.args...)
			if tc.want == "" {
				if strings.Contains(r.err, "DNS TXT") {
					t.Errorf("warned %q; want nothing", r.err)
				}
				return
			}
			if !strings.Contains(r.err, "node-provisioner: warning: DNS TXT") || !strings.Contains(r.err, tc.want) {
				t.Errorf("stderr %q; want a warning with %q (stdout %q)", r.err, tc.want, r.stdout)
			}
		})
	}
}

// TestBadSearchDomainsAreRefused runs the bad domain table through
// publish's and status's --search-domain: exit 2 naming the flag, before
// any output.
func TestBadSearchDomainsAreRefused(t *testing.T) {
	for _, bad := range badinput.Domains() {
		for _, cmd := range [][]string{{"publish", "--answer-url", "http://10.0.0.2:8090/answer"}, {"status"}} {
			t.Run(bad.Name+"/"+cmd[0], func(t *testing.T) {
				r := np(t, t.TempDir(), append(cmd, "--search-domain", bad.Value)...)
				if r.code != 2 || !strings.Contains(r.err, "--search-domain") || !strings.Contains(r.err, bad.Want) || r.stdout != "" {
					t.Errorf("%s --search-domain %q: exit %d, stdout %q, stderr %q; want 2 naming the flag and saying %q", cmd[0], bad.Value, r.code, r.stdout, r.err, bad.Want)
				}
			})
		}
	}
}
