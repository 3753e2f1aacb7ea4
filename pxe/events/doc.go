// Package events declares node-provisioner's boot timeline once: the
// [Event] a window, its backend, power control and the management API
// record, the [Kind]s of event, and the [Store] interface that keeps them
// (append, read after an id, follow).
//
// It declares types and a buffered writer only: it opens no file, serves
// nothing and links no DHCP or TFTP server, so a client (plasma-node, the
// API's Go client) can import it. The file store is package
// pxe/store/folder; events/eventstest is the conformance suite every
// store runs.
package events
