// Package fakescaleway is a fake Scaleway API on loopback for tests: the
// Elastic Metal routes terraform-provider-scaleway 2.81 calls to create,
// import, read, rename and delete a server (POST
// /baremetal/v1/zones/{zone}/servers, GET, PATCH and DELETE of
// .../servers/{id}, the offer list and offer and OS lookups, GET
// /baremetal/v3/zones/{zone}/server-private-networks), refusing a
// missing or wrong X-Auth-Token and unknown ids with the real API's error
// shape ({"message", "type", "resource", "resource_id"}). It keeps its
// servers across calls and records every call.
//
// A server is ready and installed as soon as it is created, and gone as
// soon as it is deleted; reinstalls (POST .../install) are not served.
package fakescaleway
