package pgsecret

import (
	"context"
	"errors"
	"io/fs"

	"github.com/plasmactl/plasma-node/pxe/secret"
)

// staged is a root password sealed in memory until its Commit.
type staged struct {
	s        *Store
	name, pw string
}

func (st *staged) Commit(ctx context.Context) error { return st.s.put(ctx, kindRoot, st.name, st.pw) }
func (st *staged) Discard()                         { st.pw = "" }

// StageRootPassword holds name's root password, to be kept by its
// Commit (replacing an older one); until then nothing is kept.
func (s *Store) StageRootPassword(ctx context.Context, name, pw string) (secret.Staged, error) {
	if err := validName(name); err != nil {
		return nil, err
	}
	if err := checkPassword("stage the root password", name, pw); err != nil {
		return nil, err
	}
	return &staged{s: s, name: name, pw: pw}, nil
}

// ReadRootPassword returns name's root password, an error wrapping
// fs.ErrNotExist when none is kept.
func (s *Store) ReadRootPassword(ctx context.Context, name string) (string, error) {
	if err := validName(name); err != nil {
		return "", err
	}
	return s.get(ctx, kindRoot, name)
}

// WriteRootPassword keeps name's root password at once (as a staged one
// committed), for copying a folder's secrets into the store.
func (s *Store) WriteRootPassword(ctx context.Context, name, pw string) error {
	st, err := s.StageRootPassword(ctx, name, pw)
	if err != nil {
		return err
	}
	return st.Commit(ctx)
}

// WriteBMCPassword keeps name's BMC password, sealed, and says where.
func (s *Store) WriteBMCPassword(ctx context.Context, name, pw string) (string, error) {
	if err := validName(name); err != nil {
		return "", err
	}
	if err := checkPassword("write BMC password", name, pw); err != nil {
		return "", err
	}
	return Where(kindBMC, name), s.put(ctx, kindBMC, name, pw)
}

// ReadBMCPassword returns name's BMC password: none kept is an error
// wrapping both [secret.ErrInvalidPassword] and fs.ErrNotExist; one
// sealed with another key a [*KeyError].
func (s *Store) ReadBMCPassword(ctx context.Context, name string) (string, error) {
	if err := validName(name); err != nil {
		return "", err
	}
	return s.get(ctx, kindBMC, name)
}

// RemoveBMCPassword removes name's BMC password, if any.
func (s *Store) RemoveBMCPassword(ctx context.Context, name string) error {
	if err := validName(name); err != nil {
		return err
	}
	return s.remove(ctx, kindBMC, name)
}

// KeepPrevious keeps name's root password as its previous one while it
// reinstalls; without one it does nothing.
func (s *Store) KeepPrevious(ctx context.Context, name string) error {
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
func (s *Store) ReadPreviousPassword(ctx context.Context, name string) (string, error) {
	if err := validName(name); err != nil {
		return "", err
	}
	return s.get(ctx, kindPrevious, name)
}

// WritePreviousPassword keeps name's previous root password, for
// copying a folder's secrets into the store.
func (s *Store) WritePreviousPassword(ctx context.Context, name, pw string) error {
	if err := validName(name); err != nil {
		return err
	}
	if err := checkPassword("keep the previous root password", name, pw); err != nil {
		return err
	}
	return s.put(ctx, kindPrevious, name, pw)
}

// ForgetPrevious removes name's previous root password, if any.
func (s *Store) ForgetPrevious(ctx context.Context, name string) error {
	if err := validName(name); err != nil {
		return err
	}
	return s.remove(ctx, kindPrevious, name)
}
