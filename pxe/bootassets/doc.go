// Package bootassets turns a Proxmox VE installer ISO into the files a
// machine network-boots the installer from, and keeps them: [Prepare]
// reads the ISO without root or loop mounts (its own ISO 9660 and cpio
// readers), copies the kernel and initrd, can bake the answer URL into a
// copy of the ISO (with xorriso) and patch a console boot-disk prompt into
// the installer's /init, builds a single-file netboot initrd, and records
// every asset's checksum in a manifest. [ListReleases], [ReadRelease],
// [VerifyRelease] and [StagedReleases] read what was prepared;
// [StageIPXE] copies iPXE binaries into a TFTP root.
//
// It serves nothing and prints nothing: the netboot HTTP handler serves
// the assets, and progress goes to a callback ([PrepareOptions.Progress])
// for the caller to show.
package bootassets
