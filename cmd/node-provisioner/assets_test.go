package main

import (
	"bytes"
	"compress/gzip"
	"crypto/x509"
	"encoding/pem"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestTLSFingerprintIsStable(t *testing.T) {
	state := t.TempDir()
	a, b := np(t, state, "tls", "fingerprint"), np(t, state, "tls", "fingerprint")
	if a.code != 0 || a.stdout != b.stdout || len(strings.TrimSpace(a.stdout)) != 95 {
		t.Errorf("fingerprints %q (exit %d, %s) and %q; want one stable AB:CD:... value", a.stdout, a.code, a.err, b.stdout)
	}
}

func TestPrepareStagesTheTestISO(t *testing.T) {
	state := t.TempDir()
	gz, err := os.ReadFile("../../pxe/bootassets/testdata/pve-tiny.iso.gz")
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	iso, _ := io.ReadAll(zr)
	isoPath := filepath.Join(t.TempDir(), "pve.iso")
	os.WriteFile(isoPath, iso, 0o644)
	r := np(t, state, "prepare", "--iso", isoPath)
	if r.code != 0 || !strings.Contains(r.stdout, "Staged 9.2-1") {
		t.Fatalf("prepare: %d %s %s", r.code, r.stdout, r.err)
	}
	for _, line := range []string{"preparing Proxmox VE 9.2-1 from pve.iso\n", "copy ISO: 100% (", "\nnode-provisioner: warning: the ISO has no /auto-installer-mode.toml", "\nprepared 9.2-1 in "} {
		if !strings.Contains(r.err, line) {
			t.Errorf("prepare's progress lacks %q:\n%s", line, r.err)
		}
	}
	if n := strings.Count(r.err+r.stdout, "auto-installer-mode.toml"); n != 1 {
		t.Errorf("prepare says its warning %d times, want once:\n%s%s", n, r.stdout, r.err)
	}
	for _, f := range []string{"linux26", "initrd-netboot.img", "manifest.json"} {
		if _, err := os.Stat(filepath.Join(state, "assets", "9.2-1", f)); err != nil {
			t.Errorf("missing asset: %v", err)
		}
	}
	// --cert-fingerprint auto makes the certificate naming the answer
	// URL's host (xorriso bakes the mode file).
	if _, err := exec.LookPath("xorriso"); err == nil {
		r := np(t, state, "prepare", "--iso", isoPath, "--answer-url", "https://10.1.2.3:8090/answer", "--cert-fingerprint", "auto")
		if r.code != 0 {
			t.Fatalf("prepare --cert-fingerprint auto: %d %s %s", r.code, r.stdout, r.err)
		}
		pemBytes, err := os.ReadFile(filepath.Join(state, "tls", "cert.pem"))
		if err != nil {
			t.Fatal(err)
		}
		block, _ := pem.Decode(pemBytes)
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		if err := cert.VerifyHostname("10.1.2.3"); err != nil {
			t.Errorf("the certificate prepare made does not name the answer URL's host: %v", err)
		}
	}
	if r := np(t, state, "prepare", "--iso", "main.go"); r.code != 2 || !strings.Contains(r.err, "not an auto-install capable Proxmox ISO") {
		t.Errorf("a non-ISO: exit %d %q, want 2", r.code, r.err)
	}
	if r := np(t, state, "prepare"); r.code != 2 || !strings.Contains(r.err, "--iso is required") {
		t.Errorf("no --iso: exit %d %q", r.code, r.err)
	}
}
