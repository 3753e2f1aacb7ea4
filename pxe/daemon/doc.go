// Package daemon runs node-provisioner as a long-running service: the
// management API (package api) over TLS, with the certificate of the
// state folder (<state-dir>/tls, the one of serve --tls, whose
// fingerprint clients pin), and the provisioning windows the API opens
// and closes, served in-process by a [pxe.Server] with the window
// settings the daemon was started with.
//
// The daemon keeps nothing in memory alone: registrations, tokens and
// events are in its store, and the window it opens is the site's
// ([window.SiteStore], from [store.Stores.SiteWindow]): its opening,
// deadline and settings in <state-dir>/api/window.json, or in the
// PostgreSQL store shared by the site's provisioner hosts. Each daemon
// follows the site's window (on the store's notifications, and reading
// it every second besides): it serves while the window is open and
// stops when it is closed (through any host's API) or its deadline
// passes, whoever opened it. After a restart (or a kill) a daemon
// rejoins a window whose deadline has not passed; one whose deadline
// passed stays closed. When the store cannot be read, a daemon changes
// nothing: it serves on until the deadline it last read, and never
// past it. Each daemon also tells the site it is there (its name,
// API, and the window's HTTP address while it serves), which status
// lists. A window of another process (node-provisioner serve or enable)
// on the same state folder is seen, and closed by the API's close, but
// the folder never has two.
//
// While it runs, the daemon records itself (its pid and the API's
// address) in <state-dir>/api/daemon.json; [Running] finds it, and
// [LocalClient] speaks to it from the same host with the state folder's
// certificate pinned, so that commands on the folder open and close the
// daemon's window instead of serving one of their own. It holds
// <state-dir>/api/daemon.lock as long: a second daemon on the folder is
// refused ([ErrRunning]), and a record whose pid outlived its daemon
// (reused) is not taken for one.
package daemon
