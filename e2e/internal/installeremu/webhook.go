package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/sys/unix"

	"github.com/plasmactl/plasma-node/answer"
)

// postWebhook posts the post-installation webhook with fresh SSH host
// keys, as the installed system's would be, and returns the status and
// the ed25519 key's fingerprint (ssh-keygen -l's SHA256:…).
func postWebhook(wh *answer.Webhook, info map[string]any, fqdn string, secureBoot bool, address string, disks []emuDisk, boot int) (string, string, error) {
	keys, fp, err := hostKeys(fqdn)
	if err != nil {
		return "", "", fmt.Errorf("host keys: %w", err)
	}
	hb, err := json.Marshal(webhookBody(info, fqdn, wh.AuthToken, secureBoot, address, keys, disks, boot))
	if err != nil {
		return "", "", fmt.Errorf("webhook body: %w", err)
	}
	resp, err := client(wh.CertFingerprint).Post(wh.URL, "application/json; charset=utf-8", bytes.NewReader(hb))
	if err != nil {
		return "", "", fmt.Errorf("webhook: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return "", "", fmt.Errorf("webhook: status %d", resp.StatusCode)
	}
	return fmt.Sprint(resp.StatusCode), fp, nil
}

// hostKeys makes the ed25519 and ECDSA (P-256) host keys an installed
// system has, as /etc/ssh/ssh_host_*_key.pub lines; the RSA one is
// "unknown", as the installer sends a key it could not read (making one
// takes seconds under TCG).
func hostKeys(fqdn string) (map[string]string, string, error) {
	host, _, _ := strings.Cut(fqdn, ".")
	edPub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, "", err
	}
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, "", err
	}
	out := map[string]string{"rsa": "unknown"}
	var fp string
	for slot, k := range map[string]any{"ed25519": edPub, "ecdsa": &ec.PublicKey} {
		pub, err := ssh.NewPublicKey(k)
		if err != nil {
			return nil, "", err
		}
		out[slot] = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub))) + " root@" + host
		if slot == "ed25519" {
			fp = ssh.FingerprintSHA256(pub)
		}
	}
	return out, fp, nil
}

// prefixOf is ip/mask as the webhook's address ("10.77.0.120/24").
func prefixOf(ip net.IP, mask net.IPMask) string {
	ones, _ := mask.Size()
	return fmt.Sprintf("%s/%d", ip, ones)
}

// webhookBody is the post-installation webhook's JSON, kebab-case as
// 9.2's proxmox-post-hook sends it ($schema 1.2): the management NIC
// (the first) with its address and prefix, every NIC's MAC, the host
// keys, the running kernel, boot-info (secureboot left out when off, as
// the installer's serializer does).
func webhookBody(info map[string]any, fqdn, token string, secureBoot bool, address string, keys map[string]string, disks []emuDisk, boot int) map[string]any {
	ds := []any{}
	for i, d := range disks {
		ds = append(ds, map[string]any{"size": d.size, "is-bootdisk": i == boot, "udev-properties": d.udev})
	}
	var ifs []map[string]any
	for i, n := range info["network_interfaces"].([]map[string]any) {
		nic := map[string]any{"name": n["link"], "mac": n["mac"], "udev-properties": map[string]any{"INTERFACE": n["link"]}}
		if i == 0 {
			nic["is-management"], nic["address"] = true, address
		}
		ifs = append(ifs, nic)
	}
	var uts unix.Utsname
	unix.Uname(&uts)
	bootInfo := map[string]any{"mode": bootMode()}
	if secureBoot {
		bootInfo["secureboot"] = true
	}
	b := map[string]any{
		"$schema":              map[string]any{"version": "1.2"},
		"debian-version":       "13",
		"product":              map[string]any{"fullname": "Proxmox VE", "short": "pve", "version": isoRelease},
		"iso":                  info["iso"],
		"kernel-version":       map[string]any{"sysname": "Linux", "release": unix.ByteSliceToString(uts.Release[:]), "version": unix.ByteSliceToString(uts.Version[:]), "machine": "x86_64"},
		"boot-info":            bootInfo,
		"cpu-info":             map[string]any{"cores": 1, "cpus": 1, "flags": "", "hvm": false, "model": "QEMU", "sockets": 1},
		"dmi":                  info["dmi"],
		"filesystem":           "ext4",
		"fqdn":                 fqdn,
		"machine-id":           strings.ReplaceAll(strings.ToLower(readSys("/sys/class/dmi/id/product_uuid")), "-", ""),
		"disks":                ds,
		"network-interfaces":   ifs,
		"ssh-public-host-keys": keys,
		"reboot-mode":          "power-off",
	}
	if token != "" {
		b["token"] = token
	}
	return b
}
