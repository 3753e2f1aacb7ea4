// Package tftp serves one folder read-only over TFTP, for the iPXE
// binaries that PXE firmware downloads after a proxy-DHCP offer: [Server]
// answers read requests with the blksize, timeout and tsize options,
// refuses any name that could leave its root, never refuses a request for
// its load (beyond its bounds a request waits, holding no descriptor),
// stops on time when its context ends, and reports every download it
// served or refused through [Server.OnEvent].
//
// It does not write files, stage binaries or choose which binary a
// machine boots: package bootassets stages them and package proxydhcp
// names them in its offers.
package tftp
