// Package pgwindow keeps the site's window ([sitewindow.Store]) in a
// PostgreSQL store, shared by every provisioner host of the site: the
// window in np_site_window (one row, whose changes a trigger notifies on
// the np_site_window channel), the hosts in np_site_hosts.
package pgwindow
