// Package secretfile keeps the nodes' secrets in the secrets folder
// (~/.node-secrets by default, mode 0700): each node's root password in
// <name>.pw and its BMC password in <name>.bmc.pw, mode 0600, written
// atomically. [*Folder] implements [secret.Store] and passes the suite in
// package secret/secrettest; pxe/store is the one place that opens it.
package secretfile
