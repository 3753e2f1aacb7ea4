// Package pgtest starts, for tests, a throwaway PostgreSQL cluster: initdb
// in a temporary folder and pg_ctl on a loopback port, run as the
// postgres user when the test runs as root (PostgreSQL refuses root).
//
// It installs nothing: without the server binaries (Debian package
// postgresql) the test is skipped, or failed when PLASMA_E2E=1.
package pgtest
