package postgres

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/internal/regularfile"
)

// KeySize is the size of a secrets key: AES-256.
const KeySize = 32

// maxKeyFile bounds a key file read: base64 of 32 bytes is 44.
const maxKeyFile = 1 << 10

// Errors of a key, each wrapped by a [*KeyError] with [ErrKey].
var (
	// ErrKey is wrapped by every refusal of a key.
	ErrKey = errors.New("secrets key refused")
	// ErrNoKey: the key file is missing.
	ErrNoKey = errors.New("no secrets key")
	// ErrKeyMode: the key file is not private to its owner.
	ErrKeyMode = errors.New("the secrets key file may be read by others")
	// ErrBadKey: the key file does not hold a key.
	ErrBadKey = errors.New("not a secrets key")
	// ErrWrongKey: the key is not the one the store's secrets are
	// sealed with.
	ErrWrongKey = errors.New("wrong secrets key")
)

// KeyError is a refused key: it names the key file and what is wrong,
// never the key.
type KeyError struct {
	// File is the key file.
	File string
	// Err is one of [ErrNoKey], [ErrKeyMode], [ErrBadKey], [ErrWrongKey].
	Err error
	// Detail says more, for a person.
	Detail string
}

// Error names the file and the problem.
func (e *KeyError) Error() string {
	msg := fmt.Sprintf("secrets key %s: %v", e.File, e.Err)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Unwrap returns [ErrKey] and the problem.
func (e *KeyError) Unwrap() []error { return []error{ErrKey, e.Err} }

// Key is a secrets key read from its file.
type Key struct {
	// File is where it was read from.
	File string
	// ID names it: a hash of it, safe to store and show.
	ID  string
	raw [KeySize]byte
}

// keyID is the id of key k.
func keyID(k []byte) string {
	sum := sha256.Sum256(append([]byte("node-provisioner secrets key\x00"), k...))
	return hex.EncodeToString(sum[:8])
}

// ReadKey reads the key file path: a regular file, mode 0600 or
// tighter, holding the base64 of 32 bytes and nothing else but a
// newline.
func ReadKey(path string) (*Key, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &KeyError{File: path, Err: ErrNoKey, Detail: "copy the key file from a host of this store, or give the first host none to have one made"}
	}
	if err != nil {
		return nil, &KeyError{File: path, Err: ErrBadKey, Detail: err.Error()}
	}
	if !fi.Mode().IsRegular() {
		return nil, &KeyError{File: path, Err: ErrBadKey, Detail: "not a regular file"}
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, &KeyError{File: path, Err: ErrKeyMode, Detail: fmt.Sprintf("mode %04o; want 0600", fi.Mode().Perm())}
	}
	data, err := regularfile.Read(path, maxKeyFile)
	if err != nil {
		return nil, &KeyError{File: path, Err: ErrBadKey, Detail: err.Error()}
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(raw) != KeySize {
		return nil, &KeyError{File: path, Err: ErrBadKey, Detail: fmt.Sprintf("want the base64 of %d random bytes on one line", KeySize)}
	}
	k := &Key{File: path, ID: keyID(raw)}
	copy(k.raw[:], raw)
	return k, nil
}

// CreateKey writes a new random key to path (0600), refusing to replace
// a file, and returns it.
func CreateKey(path string) (*Key, error) {
	var raw [KeySize]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, fmt.Errorf("create secrets key %s: %w", path, err)
	}
	data := base64.StdEncoding.EncodeToString(raw[:]) + "\n"
	if err := atomicfile.CreateExclusive(path, []byte(data), 0o600); err != nil {
		return nil, fmt.Errorf("create secrets key %s: %w", path, err)
	}
	return &Key{File: path, ID: keyID(raw[:]), raw: raw}, nil
}
