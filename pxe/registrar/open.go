package registrar

import (
	"errors"
	"fmt"
	"github.com/plasmactl/plasma-node/pxe/store"
	"log/slog"

	"github.com/plasmactl/plasma-node/pxe/client"
)

// Where names a node-provisioner: its management API when Server is set,
// else a state folder on this host.
type Where struct {
	// Server is the management API's URL (https://HOST[:PORT]); empty
	// means the state folder Dir.
	Server string
	// Token is the API's bearer token, needed with Server.
	Token string
	// Fingerprint pins the API's certificate (SHA-256); empty trusts the
	// system's roots.
	Fingerprint string
	// Dir is the state folder, without Server.
	Dir string
	// SecretsDir is the secrets folder, without Server; empty means
	// secret.DefaultDir.
	SecretsDir string
	// Store and KeyFile, without Server, are [Local]'s: a postgres://
	// URL beside the state folder.
	Store, KeyFile string
	// Openers are [Local]'s Openers: the store URLs it can open.
	Openers store.Openers
	// Logger receives what the store or the client does; nil discards it.
	Logger *slog.Logger
}

// ErrNoToken is wrapped by [Open]'s error for a server named without its
// API token.
var ErrNoToken = errors.New("no API token")

// ErrNowhere is wrapped by [Open]'s error when neither a server nor a
// state folder is named.
var ErrNowhere = errors.New("no node-provisioner state folder or API")

// Open returns the [Registrar] w names: a *client.Client of the API at
// w.Server, else [Local] of w.Dir. It is the one place where a program
// chooses between a node-provisioner on this host and one through its
// API; it does no I/O (the first call does). The client's errors (a bad
// URL, token or fingerprint) are returned as they are.
func Open(w Where) (Registrar, error) {
	switch {
	case w.Server != "" && w.Token == "":
		return nil, fmt.Errorf("node-provisioner API %s: %w", w.Server, ErrNoToken)
	case w.Server != "":
		c, err := client.New(client.Options{URL: w.Server, Token: w.Token, Fingerprint: w.Fingerprint, Logger: w.Logger})
		if err != nil {
			return nil, err
		}
		return c, nil
	case w.Dir == "":
		return nil, ErrNowhere
	}
	return &Local{Dir: w.Dir, SecretsDir: w.SecretsDir, Store: w.Store, KeyFile: w.KeyFile, Openers: w.Openers, Logger: w.Logger}, nil
}

var _ Registrar = (*client.Client)(nil)
