// Package apitype holds the node-provisioner management API's wire
// types: the request and reply bodies, the path prefix and headers, and
// the errors both ends name. Package pxe/api serves them and pxe/client
// speaks them; a client links only this package, not the server.
package apitype
