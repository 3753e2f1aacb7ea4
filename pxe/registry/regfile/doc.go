// Package regfile is the state folder's registrations store: registrations
// of expected machines as JSON files in TAPPaaS's format under
// <state-dir>/registrations/ ([Store]: register with pins, get, delete,
// scan, consume once, mark delivered, re-arm), safe across processes and
// crashes. It implements [registry.Registrations]; package pxe/store opens
// it, and the servers take the interface.
package regfile
