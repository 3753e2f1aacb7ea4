// Package hetzner is the Hetzner Cloud provider: pools become
// hcloud_server resources of the hetznercloud/hcloud plugin, adopted
// servers are imported by their numeric id, and the token comes from
// HCLOUD_TOKEN or infrastructure.api.token.
//
// It calls no API itself; tofu and the plugin do, at the endpoint
// infrastructure.api.uri when set (how tests use internal/fakehcloud).
package hetzner
