// Package pgsecret keeps the nodes' secrets ([secret.Store]: root and
// BMC passwords) in PostgreSQL, each sealed with AES-256-GCM under a
// 32-byte key that lives in a file on each provisioner host (0600,
// base64), never in the database. The database keeps the key's id (a
// hash of it), so a host whose key file holds another key is refused at
// [Open], naming its key file, before it reads or writes a secret; a
// missing key file, one others may read, or one that is not a key is
// refused the same way ([*KeyError]). A secret that does not open with
// the key is an error ([ErrWrongKey]), never a garbled password.
//
// Each secret is bound to its kind and name (the seal's additional
// data), so a sealed password moved to another row does not open.
package pgsecret
