// Package vmedia serves installer media to BMCs: the one-time URL a
// node's BMC mounts as a virtual CD ([Dir.Arm], kept hashed in the state
// folder and tied to the open window), and the window's handler of those
// URLs ([Handler]), which serves a node's image with ranges, HEAD, ETag
// and Last-Modified, to one address, a bounded number of requests at a
// time, and consumes its registration on the first fetch.
//
// It does not drive the BMC (package pxe/power inserts, boots and
// ejects) and builds no answer (the window's backend does,
// backend.MediaAnswerer).
package vmedia
