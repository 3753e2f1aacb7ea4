// Package fakescaleway is a fake Scaleway API on loopback for tests: the
// Elastic Metal routes terraform-provider-scaleway 2.81 calls to import,
// read and rename a server (GET and PATCH
// /baremetal/v1/zones/{zone}/servers/{id}, the offer and OS lookups,
// GET /baremetal/v3/zones/{zone}/server-private-networks), refusing a
// missing or wrong X-Auth-Token and unknown ids with the real API's error
// shape ({"message", "type", "resource", "resource_id"}). It keeps its
// servers across calls and records every call.
//
// It does not create, install or delete servers.
package fakescaleway
