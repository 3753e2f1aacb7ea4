// Package regbackend is node-provisioner's default window backend: a
// [Backend] answers a provisioning window (package pxe) from the
// registrations of a [registry.Registrations] store, as tinkerbell keeps
// its backends beside the seam (pkg/backend/{file,kube}). It boots and
// answers pending registrations, each once (Answer decides, the window's
// claim consumes), keeps installed machines on their disks, writes each
// answered node's root password to the secret store and its first-boot
// script and webhook token to the state folder, keeps the event log, and
// caches the lists the DHCP path asks for ([Backend.Allow]).
//
// [Status] and [Reinstall] are the same rules for a program without a
// window: the list of nodes with their states, and the re-arm of an
// installed node with a new password.
//
// It does not listen on the network or render answers: package pxe is the
// window, package answer the installer's format, package pxe/registry the
// registrations and their rules.
package regbackend
