// Package folder keeps node-provisioner's stores in the state folder,
// one file per store: the registrations ([Registrations], JSON files in
// TAPPaaS's format under <state-dir>/registrations/, consumed once, safe
// across processes and crashes), the installers' reports ([Installs],
// <state-dir>/installs/), the nodes' secrets ([Secrets], the secrets
// folder, 0600 in 0700), the API's tokens ([Tokens], <state-dir>/api/)
// and idempotency records ([OpenReplies], <state-dir>/api/idempotency/),
// the event log ([Events], events.jsonl, bounded by rotation to
// events.jsonl.1, appended to by several processes and followed across
// rotations), the discovery inbox ([Inbox], discovered.json), the record
// of the window serving on the host ([Window], window.json and its lock)
// and the site's window of a single host ([SiteWindow],
// <state-dir>/api/window.json). Each writes atomically, most change under
// a lock file so that several processes on the host may share them, and
// each passes its contract's conformance suite.
//
// It is one implementation of the contracts in pxe/registry, pxe/secret,
// pxe/apitoken, pxe/idempotency, pxe/events, pxe/discovery and
// pxe/window, not their home: package pxe/store opens these stores, and
// the servers take the interfaces.
package folder
