// Package postgres offers PostgreSQL as node-provisioner's site store:
// [Register] adds its opener to a [store.Openers], under the postgres://
// and postgresql:// schemes, and the opener gives the stores of package
// pgstore's subpackages on one connection pool.
//
// Only a program that offers a PostgreSQL store imports it (the daemon,
// node-provisioner): pxe/store itself links no database driver, so
// plasma-node, the API client and an embedder's window never link pgx.
package postgres
