// Package discovery is the inbox of machines that booted a discovery
// window: the record the discovery agent posts (NICs, DMI, CPUs, memory,
// disks), its strict bounded decoder, and the [Store] interface the
// inbox is kept behind, with the rules every store follows (bounded,
// entries not seen again expire, one entry per machine).
//
// It serves no HTTP and keeps no files: package pxe/netboot takes the
// agent's post, package pxe/store/folder keeps the inbox in the
// state folder, and package discovery/discoverytest is the conformance
// suite every store runs.
package discovery
