// Package systemd holds the unit files that run node-provisioner as a
// hardened systemd service (node-provisioner.service runs the daemon:
// the management API and its windows; node-provisioner-window.service
// and its timer open the window through the API on a schedule; the
// sysusers.d entry of its user), and the test that checks them with
// systemd-analyze. It has no Go code.
package systemd
