// Package tlscert keeps the provisioning server's self-signed TLS
// certificate in its state folder and handles the SHA-256 fingerprints
// the Proxmox installer pins it by: [EnsureCertificate] makes the pair
// once and loads it after, [Fingerprint] and [ParseFingerprint] write
// and read the installer's format, and [PinnedTLSConfig] is a client
// configuration that trusts exactly one pinned certificate.
//
// It serves nothing and issues no certificates from an authority: a
// server takes the certificate and sets up its own listener.
package tlscert
