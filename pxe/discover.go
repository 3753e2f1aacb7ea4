package pxe

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"

	"github.com/plasmactl/plasma-node/pxe/netboot"
)

// discoveryOf returns the netboot discovery of the window: a new random
// token, and Config.Inbox.
func (s *Server) discoveryOf() (*netboot.Discovery, error) {
	inbox := s.cfg.Inbox
	token, err := discoveryToken()
	if err != nil {
		return nil, err
	}
	return &netboot.Discovery{Token: token, Inbox: inbox, Enrol: s.cfg.Enrol, Preview: s.cfg.EnrolPreview}, nil
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
