package pgsecret

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/plasmactl/plasma-node/pxe/pgstore"
	"github.com/plasmactl/plasma-node/pxe/secret"
)

// The kinds of secret, a row's kind.
const (
	kindRoot     = "root"
	kindPrevious = "root-previous"
	kindBMC      = "bmc"
)

// Options tune [Open].
type Options struct {
	// Create makes the key file when it is missing and the store has no
	// key yet (its first host). Else a missing key file is refused.
	Create bool
}

// Store is the secrets of a PostgreSQL store, sealed with a host's key;
// safe for concurrent use, also by several hosts on one database.
type Store struct {
	db   *pgstore.DB
	key  *Key
	aead cipher.AEAD
}

var (
	_ secret.Store    = (*Store)(nil)
	_ secret.Previous = (*Store)(nil)
)

// Open returns the secrets of db sealed with the key in keyFile: a
// [*KeyError] when the file is missing (unless o.Create and the store
// has no key yet), private to nobody, not a key, or not the key the
// store's secrets are sealed with. The first key opened is the store's.
func Open(ctx context.Context, db *pgstore.DB, keyFile string, o Options) (*Store, error) {
	ctx, cancel := db.Bound(ctx)
	defer cancel()
	var stored string
	err := db.Pool.QueryRow(ctx, "SELECT key_id FROM np_secret_key WHERE id = 1").Scan(&stored)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("secrets: %w", db.Check(err))
	}
	key, err := ReadKey(keyFile)
	if errors.Is(err, ErrNoKey) && o.Create && stored == "" {
		key, err = CreateKey(keyFile)
	}
	if err != nil {
		return nil, err
	}
	if stored == "" {
		if _, err := db.Pool.Exec(ctx, "INSERT INTO np_secret_key (id, key_id) VALUES (1, $1) ON CONFLICT (id) DO NOTHING", key.ID); err != nil {
			return nil, fmt.Errorf("secrets: %w", db.Check(err))
		}
		if err := db.Pool.QueryRow(ctx, "SELECT key_id FROM np_secret_key WHERE id = 1").Scan(&stored); err != nil {
			return nil, fmt.Errorf("secrets: %w", db.Check(err))
		}
	}
	if stored != key.ID {
		return nil, &KeyError{File: keyFile, Err: ErrWrongKey, Detail: fmt.Sprintf("it holds key %s; the secrets of %s are sealed with key %s (copy that key file from a host of this store)", key.ID, db.Name(), stored)}
	}
	return newStore(db, key)
}

func newStore(db *pgstore.DB, key *Key) (*Store, error) {
	block, err := aes.NewCipher(key.raw[:])
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	return &Store{db: db, key: key, aead: aead}, nil
}

// KeyID returns the id of the store's key.
func (s *Store) KeyID() string { return s.key.ID }

// Where names the row of a secret, for messages.
func Where(kind, name string) string { return "postgres np_secrets " + kind + "/" + name }

func additional(kind, name string) []byte { return []byte("np-secret\x00" + kind + "\x00" + name) }

// seal returns pw sealed for its row: a random nonce, then the
// ciphertext with its tag.
func (s *Store) seal(kind, name, pw string) ([]byte, error) {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(pw)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return s.aead.Seal(nonce, nonce, []byte(pw), additional(kind, name)), nil
}

// open returns the password sealed in a row, or a [*KeyError] with
// [ErrWrongKey] when the row is not sealed with this key.
func (s *Store) open(kind, name, keyID string, sealed []byte) (string, error) {
	if keyID != s.key.ID {
		return "", &KeyError{File: s.key.File, Err: ErrWrongKey, Detail: fmt.Sprintf("%s is sealed with key %s, the file holds %s", Where(kind, name), keyID, s.key.ID)}
	}
	n := s.aead.NonceSize()
	if len(sealed) < n+s.aead.Overhead() {
		return "", &KeyError{File: s.key.File, Err: ErrWrongKey, Detail: Where(kind, name) + " is cut short"}
	}
	pw, err := s.aead.Open(nil, sealed[:n], sealed[n:], additional(kind, name))
	if err != nil {
		return "", &KeyError{File: s.key.File, Err: ErrWrongKey, Detail: Where(kind, name) + " does not open with it"}
	}
	return string(pw), nil
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,63}$`)

func validName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%w %q (1 to 63 letters, digits, '-' or '_')", secret.ErrInvalidName, name)
	}
	return nil
}

// invalidError says what is wrong and matches [secret.ErrInvalidPassword].
type invalidError struct{ msg string }

func (e *invalidError) Error() string { return e.msg }
func (e *invalidError) Unwrap() error { return secret.ErrInvalidPassword }

// missingError is a password not kept: it matches
// [secret.ErrInvalidPassword] and fs.ErrNotExist.
type missingError struct{ msg string }

func (e *missingError) Error() string   { return e.msg }
func (e *missingError) Unwrap() []error { return []error{secret.ErrInvalidPassword, fs.ErrNotExist} }

func checkPassword(what, name, pw string) error {
	if pw == "" || strings.ContainsAny(pw, "\r\n") {
		return &invalidError{fmt.Sprintf("%s of %s: the password is empty or spans lines", what, name)}
	}
	return nil
}

// put seals pw into the row of kind and name, replacing it.
func (s *Store) put(ctx context.Context, kind, name, pw string) error {
	sealed, err := s.seal(kind, name, pw)
	if err != nil {
		return fmt.Errorf("seal the %s password of %s: %w", kind, name, err)
	}
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	if _, err := s.db.Pool.Exec(ctx, `INSERT INTO np_secrets (kind, name, key_id, sealed) VALUES ($1, $2, $3, $4)
		ON CONFLICT (kind, name) DO UPDATE SET key_id = EXCLUDED.key_id, sealed = EXCLUDED.sealed`, kind, name, s.key.ID, sealed); err != nil {
		return fmt.Errorf("keep the %s password of %s: %w", kind, name, s.db.Check(err))
	}
	return nil
}

// get returns the password of kind and name; none is a *missingError.
func (s *Store) get(ctx context.Context, kind, name string) (string, error) {
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	var keyID string
	var sealed []byte
	err := s.db.Pool.QueryRow(ctx, "SELECT key_id, sealed FROM np_secrets WHERE kind = $1 AND name = $2", kind, name).Scan(&keyID, &sealed)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", &missingError{fmt.Sprintf("%s password of %s: %v: none kept (register the node again with it)", kind, name, secret.ErrInvalidPassword)}
	}
	if err != nil {
		return "", fmt.Errorf("%s password of %s: %w", kind, name, s.db.Check(err))
	}
	return s.open(kind, name, keyID, sealed)
}

func (s *Store) remove(ctx context.Context, kind, name string) error {
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	if _, err := s.db.Pool.Exec(ctx, "DELETE FROM np_secrets WHERE kind = $1 AND name = $2", kind, name); err != nil {
		return fmt.Errorf("remove the %s password of %s: %w", kind, name, s.db.Check(err))
	}
	return nil
}
