// Package fakehcloud is an in-memory fake of the Hetzner Cloud API on
// loopback, speaking the real API's JSON for what the hcloud plugin calls
// for servers: server types, images, locations, SSH keys, servers (create,
// get, list with pagination, rename and label updates, delete), server
// actions and actions, with the API's error shape.
//
// It is for tests only: no persistence, no billing, no networks, volumes
// or firewalls, and every action finishes at once.
package fakehcloud
