package bootassets

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/plasmactl/plasma-node/internal/hostport"
)

// modeFile is /auto-installer-mode.toml (reference §3.2).
type modeFile struct {
	Mode           string `toml:"mode"`
	PartitionLabel string `toml:"partition_label"`
	HTTP           struct {
		URL             string `toml:"url"`
		CertFingerprint string `toml:"cert_fingerprint"`
		Token           string `toml:"token"`
	} `toml:"http"`
}

// renderModeFile returns the mode file prepare-iso --fetch-from http
// writes, in the shape of its toml::to_string_pretty output. ISOs of
// Proxmox VE 8.2 refuse the partition_label key (it came with 8.3), so it
// is left out for them. answerURL, fp and token may be empty (a generic
// ISO has no URL); older ISOs ignore the token (their [http] table takes
// unknown keys).
func renderModeFile(version, answerURL, fp, token string) []byte {
	return renderMode("http", version, answerURL, fp, token)
}

// renderMode returns a mode file of mode ("http", "iso"), in the shape
// of prepare-iso's output; the [http] keys are left out when empty.
func renderMode(mode, version, answerURL, fp, token string) []byte {
	var b bytes.Buffer
	b.WriteString("mode = \"" + mode + "\"\n")
	if hasPartitionLabel(version) {
		b.WriteString("partition_label = \"proxmox-ais\"\n")
	}
	b.WriteString("\n[http]\n")
	// Both values are checked to need no TOML escaping.
	if answerURL != "" {
		b.WriteString("url = \"" + answerURL + "\"\n")
	}
	if fp != "" {
		b.WriteString("cert_fingerprint = \"" + fp + "\"\n")
	}
	if token != "" {
		b.WriteString("token = \"" + token + "\"\n")
	}
	return b.Bytes()
}

// hasPartitionLabel reports whether an ISO of the given product version
// accepts partition_label: 8.3 and later, and any version it cannot parse.
func hasPartitionLabel(version string) bool {
	a, b, ok := majorMinor(version)
	return !ok || a > 8 || a == 8 && b >= 3
}

// sendsToken reports whether the installer of an ISO of the given product
// version sends the mode file's token: 9.2 and later, and any version it
// cannot parse.
func sendsToken(version string) bool {
	a, b, ok := majorMinor(version)
	return !ok || a > 9 || a == 9 && b >= 2
}

// knownVersion reports whether version reads as MAJOR.MINOR.
func knownVersion(version string) bool {
	_, _, ok := majorMinor(version)
	return ok
}

// majorMinor reads a version MAJOR.MINOR, or MAJOR.MINOR.PATCH.
func majorMinor(version string) (major, minor int, ok bool) {
	f := strings.SplitN(version, ".", 3)
	if len(f) < 2 {
		return 0, 0, false
	}
	a, err1 := strconv.Atoi(f[0])
	b, err2 := strconv.Atoi(f[1])
	return a, b, err1 == nil && err2 == nil
}

// readModeFile parses the ISO's /auto-installer-mode.toml. It returns an
// error wrapping fs.ErrNotExist when there is none.
func readModeFile(im *isoImage) (modeFile, error) {
	var m modeFile
	raw, err := im.readFile(isoModeFile, 64<<10)
	if err != nil {
		return m, err
	}
	if err := toml.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("%s: %w", isoModeFile, err)
	}
	return m, nil
}

// checkAnswerURL accepts an absolute http or https URL of printable ASCII
// that can be written into a TOML string and a shell line without escaping,
// whose host is no link-local IPv6 address ([hostport.CheckAdvertised]).
func checkAnswerURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("answer URL %q: want an absolute http:// or https:// URL such as http://192.0.2.10:8090/answer", s)
	}
	if i := strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r >= 0x7f || r == '"' || r == '\\' || r == '`' || r == '$' }); i >= 0 {
		return fmt.Errorf("answer URL %q: character %q at %d must be percent-encoded", s, s[i], i)
	}
	if err := hostport.CheckAdvertised(u.Hostname()); err != nil {
		return fmt.Errorf("answer URL %q: %w", s, err)
	}
	return nil
}

// normalizeFingerprint turns a SHA-256 fingerprint, hex with or without
// colons in any case, into the installer's "AA:BB:…" form.
func normalizeFingerprint(s string) (string, error) {
	raw, err := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(s), ":", ""))
	if err != nil || len(raw) != 32 {
		return "", fmt.Errorf("certificate fingerprint %q: want the certificate's SHA-256 as 64 hex digits, colons optional (AA:BB:…)", s)
	}
	parts := make([]string, len(raw))
	for i, c := range raw {
		parts[i] = fmt.Sprintf("%02X", c)
	}
	return strings.Join(parts, ":"), nil
}

// xorrisoReportArgs asks xorriso for the commands that would recreate the
// ISO's boot setup; one of them carries the volume "uuid".
func xorrisoReportArgs(iso string) []string {
	return []string{"-dev", iso, "-report_system_area", "cmd"}
}

// xorrisoMapArgs maps the local file into the ISO at target, keeping the
// boot setup and, when uuid is not empty, the volume uuid GRUB looks for
// (reference §3.1: prepare-iso does the same).
func xorrisoMapArgs(uuid, iso, local, target string) []string {
	args := []string{"-boot_image", "any", "keep"}
	if uuid != "" {
		args = append(args, "-volume_date", "uuid", uuid)
	}
	return append(args, "-dev", iso, "-map", local, target)
}

// parseVolumeUUID finds the "-volume_date uuid '…'" line of xorriso's
// report; it returns "" when there is none.
func parseVolumeUUID(report string) string {
	for line := range strings.SplitSeq(report, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "-volume_date uuid ") {
			continue
		}
		f := strings.Fields(line)
		v := strings.Trim(f[len(f)-1], "'")
		if isDigits(v) {
			return v
		}
	}
	return ""
}

// bakeModeFile writes the mode file into the ISO copy at isoPath with
// xorriso and checks it reads back.
func (p *preparer) bakeModeFile(ctx context.Context, src *isoImage, dir, isoPath string) error {
	if p.token == "" && !p.noToken {
		// Keep the token of an ISO prepared with prepare-iso
		// --answer-auth-token rather than drop it when re-baking.
		if m, err := readModeFile(src); err == nil && m.HTTP.Token != "" {
			if checkAnswerToken(m.HTTP.Token) == nil {
				p.token = m.HTTP.Token
				p.prog.note("keeping the answer token of the prepared ISO")
			} else {
				p.warn("the ISO's answer token cannot be written back unescaped; it is dropped")
			}
		}
	}
	if p.token == "" && !p.noToken && knownVersion(p.rel.Version) && sendsToken(p.rel.Version) {
		// A 9.2 installer sends a token: without one the window answers
		// whoever names a registered machine's MAC or serial.
		t, err := newAnswerToken()
		if err != nil {
			return err
		}
		p.token = t
		p.prog.note("answer token generated: the " + p.rel.Version + " installer sends it and the window refuses answer requests without it (token \"none\" bakes none)")
	}
	if p.token != "" && !sendsToken(p.rel.Version) {
		return fmt.Errorf("an answer token needs a 9.2 or later ISO: the installer of %s sends none, and the window would refuse it", p.rel.Version)
	}
	want := renderModeFile(p.rel.Version, p.opts.AnswerURL, p.fp, p.token)
	if p.fp != "" && strings.HasPrefix(p.opts.AnswerURL, "http://") {
		p.warn("a certificate fingerprint only matters for an https:// answer URL", "url", p.opts.AnswerURL)
	}
	p.prog.note("baking " + isoModeFile + " into the ISO copy (xorriso)")
	out, err := p.runXorriso(ctx, xorrisoReportArgs(isoPath))
	if err != nil {
		return err
	}
	uuid := parseVolumeUUID(out)
	if uuid == "" {
		uuid = src.volumeDate
	}
	local := filepath.Join(dir, ".auto-installer-mode.toml")
	if err := os.WriteFile(local, want, 0o644); err != nil {
		return err
	}
	defer os.Remove(local)
	if _, err := p.runXorriso(ctx, xorrisoMapArgs(uuid, isoPath, local, isoModeFile)); err != nil {
		return err
	}
	im, f, err := openISOFile(isoPath)
	if err != nil {
		return fmt.Errorf("read the ISO xorriso wrote: %w", err)
	}
	defer f.Close()
	got, err := im.readFile(isoModeFile, 64<<10)
	if err != nil {
		return fmt.Errorf("read back %s: %w", isoModeFile, err)
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("read back %s: xorriso wrote %q, want %q", isoModeFile, got, want)
	}
	p.log.Info("mode file baked into the ISO", "url", p.opts.AnswerURL, "generic", p.opts.Generic, "fingerprint", p.fp != "", "token", p.token != "", "volume_uuid", uuid)
	return nil
}

// runXorriso runs xorriso with args and returns its standard output.
func (p *preparer) runXorriso(ctx context.Context, args []string) (string, error) {
	cmd := exec.CommandContext(ctx, p.xorriso, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return "", cerr
		}
		return "", fmt.Errorf("xorriso %s: %w: %s", strings.Join(args, " "), err, lastLines(stderr.String(), 5))
	}
	return stdout.String(), nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}
