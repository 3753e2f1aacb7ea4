// Package powertest is a working [power.Media] for tests of the code
// that boots and ejects virtual media: node media served by a local
// image server while armed, each Arm and Disarm kept in order.
//
// It does not make installer media or answers (package pxe/vmedia does)
// and drives no BMC (internal/fakeredfish is the BMC).
package powertest
