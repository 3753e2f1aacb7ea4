// Package secret declares the store of the nodes' secrets, [Store]: the
// root password each answer generates (staged, then committed once its
// registration is consumed) and the BMC passwords. Its implementations
// are package pxe/store/folder's (0600 files in a 0700 folder) and
// pxe/store/postgres's (sealed with the host's key). No error and no log
// line holds a secret.
package secret
