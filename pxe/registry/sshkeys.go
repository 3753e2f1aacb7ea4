package registry

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/internal/regularfile"
)

// ErrInvalidSSHKey is wrapped by [LoadSSHKeys] errors about a file that
// does not hold public keys.
var ErrInvalidSSHKey = errors.New("invalid SSH public key")

// DefaultSSHKeyFiles returns those of home/.ssh/id_ed25519.pub and
// home/.ssh/id_rsa.pub that exist, in that order.
func DefaultSSHKeyFiles(home string) []string {
	var out []string
	for _, n := range []string{"id_ed25519.pub", "id_rsa.pub"} {
		p := filepath.Join(home, ".ssh", n)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	return out
}

// maxKeyFileSize bounds a public key file; real ones are a few KiB.
const maxKeyFileSize = 1 << 20

// LoadSSHKeys reads OpenSSH public key files (the .pub files or an
// authorized_keys without options) and returns their keys, one per line
// that is neither blank nor a '#' comment, trimmed, in file order and
// without repeats. Each key must be "TYPE BASE64 [comment]" where TYPE is
// ssh-ed25519, ssh-rsa, ecdsa-sha2-*, or sk-* and the base64 blob starts
// with that type. Errors wrap [ErrInvalidSSHKey] and name the file and
// line, but never quote it: a private key given by mistake must not end
// up in a log. A file without any key is an error too.
func LoadSSHKeys(files []string) ([]string, error) {
	var keys []string
	for _, f := range files {
		data, err := readSmall(f, maxKeyFileSize)
		if err != nil {
			return nil, fmt.Errorf("read SSH keys %s: %w", f, err)
		}
		n := 0
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64<<10), maxKeyFileSize)
		for line := 1; sc.Scan(); line++ {
			t := strings.TrimSpace(sc.Text())
			if t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			if err := checkPublicKey(t); err != nil {
				return nil, fmt.Errorf("read SSH keys %s line %d: %w", f, line, err)
			}
			n++
			if !slices.Contains(keys, t) {
				keys = append(keys, t)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("read SSH keys %s: %w", f, err)
		}
		if n == 0 {
			return nil, fmt.Errorf("read SSH keys %s: %w: no key in the file", f, ErrInvalidSSHKey)
		}
	}
	return keys, nil
}

func readSmall(path string, limit int64) ([]byte, error) {
	data, err := regularfile.Read(path, limit)
	if errors.Is(err, regularfile.ErrTooLarge) {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrInvalidSSHKey, limit)
	}
	return data, err
}

func checkPublicKey(line string) error {
	if strings.Contains(line, "PRIVATE KEY") {
		return fmt.Errorf("%w: this is a private key; give the .pub file", ErrInvalidSSHKey)
	}
	const want = "want TYPE BASE64 [comment] with TYPE ssh-ed25519, ssh-rsa, ecdsa-sha2-* or sk-*"
	fields := strings.Fields(line)
	if len(fields) < 2 {
		return fmt.Errorf("%w: %s", ErrInvalidSSHKey, want)
	}
	typ := fields[0]
	if typ != "ssh-ed25519" && typ != "ssh-rsa" && !strings.HasPrefix(typ, "ecdsa-sha2-") && !strings.HasPrefix(typ, "sk-") {
		return fmt.Errorf("%w: key type is not one of ssh-ed25519, ssh-rsa, ecdsa-sha2-*, sk-* (options before the key are not supported); %s", ErrInvalidSSHKey, want)
	}
	blob, err := base64.StdEncoding.DecodeString(fields[1])
	if err != nil {
		return fmt.Errorf("%w: the key is not base64; %s", ErrInvalidSSHKey, want)
	}
	// The blob starts with the type as an SSH string: uint32 length, bytes.
	if len(blob) < 4 {
		return fmt.Errorf("%w: the key blob is truncated", ErrInvalidSSHKey)
	}
	n := binary.BigEndian.Uint32(blob)
	if uint64(n) > uint64(len(blob)-4) || string(blob[4:4+n]) != typ {
		return fmt.Errorf("%w: the key blob does not start with its type %s", ErrInvalidSSHKey, typ)
	}
	return nil
}
