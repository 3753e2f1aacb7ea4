// Package installtest is the conformance suite of [registry.Installs]:
// what every store of install reports (the state folder's, a
// database's, an embedder's) must do. A store's test runs it with [Run].
package installtest
