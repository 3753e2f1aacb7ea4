// Package fakeovh is a fake OVHcloud API on loopback for tests: the
// signed-request handshake (/auth/time, /auth/details), /me, and the
// dedicated server routes terraform-provider-ovh 2.19 calls to import,
// read, update and rename a server and to read its network interfaces
// and hardware, with the real API's error shape ({"class", "message"}
// and its status codes). It keeps its servers across calls and records
// every call.
//
// It does not take orders (the cart and checkout flow), reinstall or
// terminate servers, nor speak OAuth2: the plugin's application-key
// mode is the one a fake endpoint URL allows.
package fakeovh
