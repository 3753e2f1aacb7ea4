// Package answerclient plays proxmox-fetch-answer's HTTP exchange for the
// e2e tests: the POST of the system info, with the headers an installer
// of a given release sends, and the reading of the reply as that release
// reads it (pve-installer proxmox-fetch-answer/src/fetch_plugins/http.rs,
// proxmox-installer-common/src/http.rs). The installer emulator
// (e2e/internal/installeremu) uses it inside its QEMU machine, and the
// tests use it as a process of their own.
//
// It is a test helper: it does not find the answer URL (DHCP, DNS or the
// ISO's mode file) or pin certificates; the caller's client does that.
package answerclient
