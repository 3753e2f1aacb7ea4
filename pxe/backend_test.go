package pxe

import (
	"context"
	"net"

	"github.com/plasmactl/plasma-node/pxe/backend"
)

// allowFunc is a backend that lets the machines it reports true for boot
// (into nothing: scripts exit) and answers none.
type allowFunc func(net.HardwareAddr) bool

func (f allowFunc) Allow(mac net.HardwareAddr) bool { return f(mac) }

func (allowFunc) Boot(context.Context, string) (backend.Boot, error) {
	return backend.Boot{Reason: "not booted in this test"}, nil
}

func (allowFunc) Answer(context.Context, backend.AnswerRequest) (*backend.Answer, error) {
	return nil, backend.ErrNoAnswer
}

// allowAll is an [allowFunc] that lets every machine boot.
var allowAll = allowFunc(func(net.HardwareAddr) bool { return true })
