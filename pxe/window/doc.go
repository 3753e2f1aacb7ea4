// Package window holds the provisioning window's state, on a host and
// across the site.
//
// On a host: the record a serving window keeps ([Record]) in the state
// folder, the lock that gives one state folder one window at a time
// ([Lock], [HeldError], [ErrOpen]), and the [Store] interface they sit
// behind. It is what status and disable on the host read.
//
// Across the site: the desired state every provisioner host follows
// ([Site]: open until a deadline, its Secure Boot and discovery
// settings, who opened it and when) and the hosts that follow it
// ([Host], each advertising its API, its HTTP address and answer URL,
// whether it serves, when last seen), behind [SiteStore]. A daemon opens
// and closes the site's window through it; each daemon of the site
// watches the store ([SiteStore.Changes], with a bounded poll beside it)
// and starts or stops its own servers to match.
//
// Package pxe/store/folder has the state folder's stores of both (one
// host: the site's record is the daemon's API folder's window.json);
// package pxe/store/postgres keeps the site's window in PostgreSQL for
// several hosts. Package windowtest is the conformance suite of both
// stores.
//
// It links no server: clients such as pxe/client and the pxe provider
// read window states and match its errors without the DHCP, TFTP and
// HTTP servers of package pxe.
package window
