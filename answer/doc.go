// Package answer is the Proxmox VE automated installer's answer format,
// and only that: the answer model and its answer.toml rendering for each
// installer version (snake_case keys before 8.4, kebab-case from 8.4, never
// a key the version does not know), decoding and validation with the
// installer's rules, the system-info payload the installer POSTs when it
// asks for its answer, SHA-512 crypt for hashed root passwords, and the
// boot-disk selection ([BootDisk]: the disk-list or udev filter the
// installer formats). It keeps no files and serves nothing:
// registrations are package pxe/registry's, secrets pxe/secret's, the
// HTTP side package pxe/netboot's.
//
// The entry points are [Render] (an [Answer] to TOML for a [Version], or
// to JSON, [FormatJSON], for installers from 9.2), [Validate] (the
// installer's rules), [Decode] and [DecodeJSON] (TOML or JSON back to an
// Answer, as a given installer reads it), [ParseSystemInfo] (the request
// body) and [HashPassword].
//
// The answer file is declared once, as a schema of one table per TOML
// table (listed by [Schema]): each key's name, type, first and last
// installer release and legacy alias, bound to the model field it fills.
// Rendering, decoding, the version rules (a key the installer does not
// know is refused, or left out with [RenderOptions].DropUnsupported) and
// the checks of each value are driven by it; the rules across keys (one
// root password, what network.source allows) are written beside it.
//
// Key and section history, by installer release (see [Version82] and the
// constants after it):
//
//	8.2  [global] keyboard country fqdn mailto timezone root_password
//	     reboot_on_error root_ssh_keys; [network] source cidr dns gateway
//	     filter; [disk-setup] filesystem disk_list filter filter_match
//	     zfs.{raid,ashift,arc_max,checksum,compress,copies,hdsize}
//	     lvm.{hdsize,swapsize,maxroot,maxvz,minfree} btrfs.{raid,hdsize}
//	8.3  root_password_hashed, btrfs.compress,
//	     [post-installation-webhook] url cert_fingerprint,
//	     [first-boot] source ordering url cert-fingerprint (kebab already)
//	8.3.3 RAID levels read in upper case too ("RAIDZ-1")
//	8.4  every key kebab-case (snake_case stays an alias), reboot-mode,
//	     fqdn as a table: source = "from-dhcp" (its default) and domain,
//	     root-password >= 8 bytes
//	9.1  network.interface-name-pinning.{enabled (required),mapping}
//	9.2  subscription-key, post-installation-webhook.auth-token (alias
//	     auth_token); network.source required
//
// Every release refuses a purely numeric host name ("123.example").
//
// It does not listen on the network, boot machines or prepare ISOs (that is
// package pxe and its subpackages), and it leaves request size limits to
// the HTTP server.
package answer
