// Package pginstalls keeps the installers' reports
// ([registry.Installs]) in PostgreSQL, a row per registration name, so
// that the report a node's installer posted to one host is seen by
// every host. It keeps what it is given and checks only the name.
package pginstalls
