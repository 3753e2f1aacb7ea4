package registry

import (
	"errors"
	"time"

	"github.com/plasmactl/plasma-node/answer"
)

// ErrNoInstall is wrapped by [Installs.Get]'s error for a node whose
// installer has not reported.
var ErrNoInstall = errors.New("no install report")

// Install is what a node's installer reported when it finished (the
// post-installation webhook), kept with its consumed registration.
type Install struct {
	// Name is the registration's name.
	Name string `json:"name"`
	// Reported is when the webhook came.
	Reported time.Time `json:"reported"`
	// ClientIP is the address the webhook came from.
	ClientIP string `json:"client_ip,omitempty"`
	// Report is what the installer said of the installed system.
	Report answer.InstallReport `json:"report"`
}
