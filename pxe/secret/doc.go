// Package secret keeps the nodes' secrets: the root password each answer
// generates (staged, then committed once its registration is consumed)
// and the BMC passwords, behind the [Store] interface; [Folder] is the
// secrets folder's implementation (0600 files in a 0700 folder). No
// error and no log line holds a secret.
package secret
