package agent

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/plasmactl/plasma-node/pxe/discovery"
)

// ErrNoWindow is wrapped by parseCmdline's error for a kernel command
// line without the window's URL or token.
var ErrNoWindow = errors.New("the kernel command line names no discovery window")

// Target is where the report goes: the window's URL and token.
type Target struct {
	URL   string
	Token string
}

// parseCmdline reads the window's post URL and token from a kernel
// command line ([discovery.ArgURL], [discovery.ArgToken]). The URL must
// be http or https.
func parseCmdline(cmdline string) (Target, error) {
	var t Target
	for _, w := range strings.Fields(cmdline) {
		k, v, _ := strings.Cut(w, "=")
		switch k {
		case discovery.ArgURL:
			t.URL = v
		case discovery.ArgToken:
			t.Token = v
		}
	}
	if t.URL == "" || t.Token == "" {
		return Target{}, fmt.Errorf("%w (%s= and %s=)", ErrNoWindow, discovery.ArgURL, discovery.ArgToken)
	}
	u, err := url.Parse(t.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Target{}, fmt.Errorf("%w: %s %q is not an http(s) URL", ErrNoWindow, discovery.ArgURL, t.URL)
	}
	return t, nil
}
