// Package systemd holds the unit files that run node-provisioner as a
// hardened systemd service (node-provisioner.service, a timer that opens
// the window on a schedule, and the sysusers.d entry of its user), and
// the test that checks them with systemd-analyze. It has no Go code.
package systemd
