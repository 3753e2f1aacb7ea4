package pxe

import "github.com/plasmactl/plasma-node/pxe/window"

// Window is the record a serving window keeps in its state folder (see
// package window, which clients read it with).
type Window = window.Record

// ErrWindowOpen is the error of [Enable] and [Server.Serve] when a window
// is already open on the state folder; it is [window.ErrOpen].
var ErrWindowOpen = window.ErrOpen

// WindowHeldError is the error of [Server.Serve] and [Enable] when another
// window holds the state folder; it matches [ErrWindowOpen].
type WindowHeldError = window.HeldError
