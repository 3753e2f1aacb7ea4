package postgres

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/plasmactl/plasma-node/pxe/secret"
)

// The kinds of secret, a row's kind.
const (
	kindRoot     = "root"
	kindPrevious = "root-previous"
	kindBMC      = "bmc"
)

// SecretsOptions tune [OpenSecrets].
type SecretsOptions struct {
	// Create makes the key file when it is missing and the store has no
	// key yet (its first host). Else a missing key file is refused.
	Create bool
}

// Secrets keeps the nodes' secrets ([secret.Store]: root and BMC
// passwords) in PostgreSQL, each sealed with AES-256-GCM under a 32-byte
// [Key] that lives in a file on each provisioner host (0600, base64),
// never in the database; safe for concurrent use, also by several hosts
// on one database. The database keeps the key's id (a hash of it), so a
// host whose key file holds another key is refused at [OpenSecrets],
// naming its key file, before it reads or writes a secret; a missing key
// file, one others may read, or one that is not a key is refused the
// same way ([*KeyError]). A secret that does not open with the key is an
// error ([ErrWrongKey]), never a garbled password.
//
// Each secret is bound to its kind and name (the seal's additional
// data), so a sealed password moved to another row does not open.
type Secrets struct {
	db   *DB
	key  *Key
	aead cipher.AEAD
}

var (
	_ secret.Store    = (*Secrets)(nil)
	_ secret.Previous = (*Secrets)(nil)
)

// OpenSecrets returns the secrets of db sealed with the key in keyFile: a
// [*KeyError] when the file is missing (unless o.Create and the store
// has no key yet), private to nobody, not a key, or not the key the
// store's secrets are sealed with. The first key opened is the store's.
func OpenSecrets(ctx context.Context, db *DB, keyFile string, o SecretsOptions) (*Secrets, error) {
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
	return newSecrets(db, key)
}

func newSecrets(db *DB, key *Key) (*Secrets, error) {
	block, err := aes.NewCipher(key.raw[:])
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	return &Secrets{db: db, key: key, aead: aead}, nil
}

// KeyID returns the id of the store's key.
func (s *Secrets) KeyID() string { return s.key.ID }

// secretWhere names the row of a secret, for messages.
func secretWhere(kind, name string) string { return "postgres np_secrets " + kind + "/" + name }

func additional(kind, name string) []byte { return []byte("np-secret\x00" + kind + "\x00" + name) }

// seal returns pw sealed for its row: a random nonce, then the
// ciphertext with its tag.
func (s *Secrets) seal(kind, name, pw string) ([]byte, error) {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(pw)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return s.aead.Seal(nonce, nonce, []byte(pw), additional(kind, name)), nil
}

// open returns the password sealed in a row, or a [*KeyError] with
// [ErrWrongKey] when the row is not sealed with this key.
func (s *Secrets) open(kind, name, keyID string, sealed []byte) (string, error) {
	if keyID != s.key.ID {
		return "", &KeyError{File: s.key.File, Err: ErrWrongKey, Detail: fmt.Sprintf("%s is sealed with key %s, the file holds %s", secretWhere(kind, name), keyID, s.key.ID)}
	}
	n := s.aead.NonceSize()
	if len(sealed) < n+s.aead.Overhead() {
		return "", &KeyError{File: s.key.File, Err: ErrWrongKey, Detail: secretWhere(kind, name) + " is cut short"}
	}
	pw, err := s.aead.Open(nil, sealed[:n], sealed[n:], additional(kind, name))
	if err != nil {
		return "", &KeyError{File: s.key.File, Err: ErrWrongKey, Detail: secretWhere(kind, name) + " does not open with it"}
	}
	return string(pw), nil
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
func (s *Secrets) put(ctx context.Context, kind, name, pw string) error {
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
func (s *Secrets) get(ctx context.Context, kind, name string) (string, error) {
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

func (s *Secrets) remove(ctx context.Context, kind, name string) error {
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	if _, err := s.db.Pool.Exec(ctx, "DELETE FROM np_secrets WHERE kind = $1 AND name = $2", kind, name); err != nil {
		return fmt.Errorf("remove the %s password of %s: %w", kind, name, s.db.Check(err))
	}
	return nil
}

// staged is a root password sealed in memory until its Commit.
type staged struct {
	s        *Secrets
	name, pw string
}

func (st *staged) Commit(ctx context.Context) error { return st.s.put(ctx, kindRoot, st.name, st.pw) }
func (st *staged) Discard()                         { st.pw = "" }

// StageRootPassword holds name's root password, to be kept by its
// Commit (replacing an older one); until then nothing is kept.
func (s *Secrets) StageRootPassword(ctx context.Context, name, pw string) (secret.Staged, error) {
	if err := secret.ValidateName(name); err != nil {
		return nil, err
	}
	if err := checkPassword("stage the root password", name, pw); err != nil {
		return nil, err
	}
	return &staged{s: s, name: name, pw: pw}, nil
}

// ReadRootPassword returns name's root password, an error wrapping
// fs.ErrNotExist when none is kept.
func (s *Secrets) ReadRootPassword(ctx context.Context, name string) (string, error) {
	if err := secret.ValidateName(name); err != nil {
		return "", err
	}
	return s.get(ctx, kindRoot, name)
}

// WriteRootPassword keeps name's root password at once (as a staged one
// committed), for copying a folder's secrets into the store.
func (s *Secrets) WriteRootPassword(ctx context.Context, name, pw string) error {
	st, err := s.StageRootPassword(ctx, name, pw)
	if err != nil {
		return err
	}
	return st.Commit(ctx)
}

// WriteBMCPassword keeps name's BMC password, sealed, and says where.
func (s *Secrets) WriteBMCPassword(ctx context.Context, name, pw string) (string, error) {
	if err := secret.ValidateName(name); err != nil {
		return "", err
	}
	if err := checkPassword("write BMC password", name, pw); err != nil {
		return "", err
	}
	return secretWhere(kindBMC, name), s.put(ctx, kindBMC, name, pw)
}

// ReadBMCPassword returns name's BMC password: none kept is an error
// wrapping both [secret.ErrInvalidPassword] and fs.ErrNotExist; one
// sealed with another key a [*KeyError].
func (s *Secrets) ReadBMCPassword(ctx context.Context, name string) (string, error) {
	if err := secret.ValidateName(name); err != nil {
		return "", err
	}
	return s.get(ctx, kindBMC, name)
}

// RemoveBMCPassword removes name's BMC password, if any.
func (s *Secrets) RemoveBMCPassword(ctx context.Context, name string) error {
	if err := secret.ValidateName(name); err != nil {
		return err
	}
	return s.remove(ctx, kindBMC, name)
}

// KeepPrevious keeps name's root password as its previous one while it
// reinstalls; without one it does nothing.
func (s *Secrets) KeepPrevious(ctx context.Context, name string) error {
	pw, err := s.ReadRootPassword(ctx, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.put(ctx, kindPrevious, name, pw)
}

// ReadPreviousPassword returns name's previous root password, an error
// wrapping fs.ErrNotExist when none is kept.
func (s *Secrets) ReadPreviousPassword(ctx context.Context, name string) (string, error) {
	if err := secret.ValidateName(name); err != nil {
		return "", err
	}
	return s.get(ctx, kindPrevious, name)
}

// WritePreviousPassword keeps name's previous root password, for
// copying a folder's secrets into the store.
func (s *Secrets) WritePreviousPassword(ctx context.Context, name, pw string) error {
	if err := secret.ValidateName(name); err != nil {
		return err
	}
	if err := checkPassword("keep the previous root password", name, pw); err != nil {
		return err
	}
	return s.put(ctx, kindPrevious, name, pw)
}

// ForgetPrevious removes name's previous root password, if any.
func (s *Secrets) ForgetPrevious(ctx context.Context, name string) error {
	if err := secret.ValidateName(name); err != nil {
		return err
	}
	return s.remove(ctx, kindPrevious, name)
}
