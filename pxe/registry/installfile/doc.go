// Package installfile is the state folder's [registry.Installs]: one
// JSON file per installed node in <state-dir>/installs/.
package installfile
