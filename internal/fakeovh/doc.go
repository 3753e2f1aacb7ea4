// Package fakeovh is a fake OVHcloud API on loopback for tests: the
// signed-request handshake (/auth/time, /auth/details), /me, the order
// flow terraform-provider-ovh 2.19 drives to buy a dedicated server
// (cart, assign, item, configurations, checkout, payment, order status,
// details and their extension), and the dedicated server routes it calls
// to import, read, update, rename, reinstall (with its task) and
// terminate a server (terminate, the emailed token, confirmTermination),
// and to read its network interfaces and hardware, with the real API's
// error shape ({"class", "message"} and its status codes). It keeps its
// servers, orders and emails across calls and records every call; an
// order is delivered at once.
//
// It does not speak OAuth2: the plugin's application-key mode is the
// one a fake endpoint URL allows.
package fakeovh
