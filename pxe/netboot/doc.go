// Package netboot is the HTTP side of a provisioning window: one
// [Handler] serving the iPXE script each machine boots by, the boot
// assets, the iPXE binaries for HTTP boot, the installer's POST /answer
// (rendered for the installer's version), its first-boot script and
// webhook, and the window's status page, GET /status, the boot
// [Timeline] and Prometheus [Metrics]. Every decision is asked of a
// [backend.Backend].
//
// It listens on nothing and keeps no state of its own but the timeline
// and the counters: package pxe mounts it in a window, beside proxy-DHCP
// and TFTP, and the backend keeps the registrations.
package netboot
