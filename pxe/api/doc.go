// Package api is node-provisioner's management API: an [http.Handler]
// serving JSON under /api/v1/, guarded by the bearer tokens of
// [apitoken]. The daemon (package daemon) serves it over TLS; the Go
// client (package client) speaks it.
//
//	GET    /api/v1/health                  no token: {"status":"ok","version":…}
//	GET    /api/v1/registrations           read: the nodes and their states
//	POST   /api/v1/registrations           register: a registration (201); Idempotency-Key
//	GET    /api/v1/registrations/{name}    read: one node
//	DELETE /api/v1/registrations/{name}    register: remove a pending one (204)
//	GET    /api/v1/window                  read: the provisioning window
//	PUT    /api/v1/window                  admin: open it, {"ttl":"2h"}
//	DELETE /api/v1/window                  admin: close it (204)
//	GET    /api/v1/events                  read: text/event-stream of the event log
//	GET    /api/v1/tokens                  admin: the tokens (never the tokens themselves)
//	POST   /api/v1/tokens                  admin: {"name":…,"scope":…}, the token in the reply, once (201)
//	DELETE /api/v1/tokens/{name}           admin: revoke (204)
//
// A registration is posted in the registration file's JSON (name, macs,
// boot_disk, pools, serial, uuid, ssh_keys, created) plus "replace"; it
// is validated as node-provisioner register validates it. A POST with an
// Idempotency-Key header is done once: a repeat with the same key and
// body gets the first reply (kept a day in its store, so also after a
// restart); the same key with another body is refused with 422.
//
// Errors are JSON {"error": …, "field": …}: 400 malformed or unknown
// fields, 401 a missing, wrong, revoked or expired token (with WWW-Authenticate:
// Bearer), 403 a token without the scope, 404, 409 a pin another
// registration holds or a window already open, 413 a body over
// [MaxBody], 422 an invalid registration, 429 an address that failed to
// authenticate too often (it is logged with the address, never the
// token).
//
// The event stream sends every event of the state folder's event log
// (answers, refusals, installs and, when the daemon runs the window, the
// boot steps) as "id: …" and "data: <JSON backend.Event>"; a client
// resumes after an event by sending its id as Last-Event-ID, or gets
// only new events with Last-Event-ID: now. At most Config.MaxStreams
// streams are open at once (503 beyond).
package api
