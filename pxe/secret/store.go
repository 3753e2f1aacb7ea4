package secret

import "context"

// Staged is a secret written under a temporary name: Commit puts it in
// place, Discard drops it.
type Staged interface {
	// Commit puts the secret in place; after it the secret is the
	// node's.
	Commit(ctx context.Context) error
	// Discard drops a secret not committed; it does no remote I/O (a
	// temporary file removed, or a value forgotten), so it takes no
	// context and cannot fail. After Commit it does nothing.
	Discard()
}

// Store is the store of the nodes' secrets: the root password each
// answer generates and the BMC passwords. Package pxe/store/folder's
// Secrets is the secrets folder's implementation. Names are registration
// names.
type Store interface {
	// StageRootPassword stages name's root password, to be committed
	// once its registration is consumed (and discarded if it is not).
	StageRootPassword(ctx context.Context, name, password string) (Staged, error)
	// WriteBMCPassword keeps name's BMC password and says where (for
	// the folder, its file), for messages.
	WriteBMCPassword(ctx context.Context, name, password string) (where string, err error)
	// ReadBMCPassword returns name's BMC password, an error wrapping
	// fs.ErrNotExist when none is kept.
	ReadBMCPassword(ctx context.Context, name string) (string, error)
	// RemoveBMCPassword removes name's BMC password, if any.
	RemoveBMCPassword(ctx context.Context, name string) error
}
