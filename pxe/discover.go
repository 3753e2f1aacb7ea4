package pxe

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/plasmactl/plasma-node/pxe/netboot"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store"
)

// ErrUnpinnedPending is wrapped by the error of a discovery window that
// cannot open because a pending registration pins no machine: any
// stranger would match it (the single-unpinned rule). The error names
// the registrations.
var ErrUnpinnedPending = errors.New("a pending registration pins no machine")

// UnpinnedPending returns the names of the pending registrations of
// regs that pin no machine (no MAC, serial or UUID).
func UnpinnedPending(ctx context.Context, regs registry.Registrations) ([]string, error) {
	pending, err := registry.Pending(ctx, regs)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range pending {
		if len(r.Pins()) == 0 {
			out = append(out, r.Name)
		}
	}
	return out, nil
}

// checkDiscover refuses a discovery window while an unpinned
// registration is pending.
func checkDiscover(ctx context.Context, regs registry.Registrations) error {
	names, err := UnpinnedPending(ctx, regs)
	if err != nil {
		return err
	}
	if len(names) > 0 {
		return &ConfigError{Field: "Discover", Value: strings.Join(names, ", "),
			Reason: "a discovery window boots every unregistered machine, and one would meet the only-pending rule: pin or unregister it first",
			Err:    fmt.Errorf("%w: %s", ErrUnpinnedPending, strings.Join(names, ", "))}
	}
	return nil
}

// discoveryOf returns the netboot discovery of the window: a new random
// token, and the inbox of Config.Inbox or of the state folder.
func (s *Server) discoveryOf() (*netboot.Discovery, error) {
	cfg := &s.cfg
	inbox := cfg.Inbox
	if inbox == nil {
		if cfg.StateDir == "" {
			return nil, &ConfigError{Field: "Inbox", Reason: "a discovery window keeps its reports in the state folder or an inbox; give one"}
		}
		stores, err := store.Open(cfg.StateDir, store.Options{SecretsDir: cfg.SecretsDir, Logger: s.log})
		if err != nil {
			return nil, err
		}
		if inbox, err = stores.Discovered(); err != nil {
			return nil, err
		}
	}
	token, err := discoveryToken()
	if err != nil {
		return nil, err
	}
	return &netboot.Discovery{Token: token, Inbox: inbox}, nil
}

// discoveryToken returns a new window token: 32 random bytes, base64url.
func discoveryToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("discovery token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// allowEveryMachine is proxy-DHCP's allow of a discovery window: every machine
// gets an offer, and its script decides.
func allowEveryMachine(net.HardwareAddr) bool { return true }
