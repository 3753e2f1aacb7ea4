// Package registrar is where a program registers machines with a
// node-provisioner, on this host or through its management API, in one
// way: the [Registrar] interface, with [Local] for a state folder and a
// *client.Client of package pxe/client for the API, and [Open], the one
// place where a program chooses between them ([Where]: a server, or a
// state folder). node-provisioner,
// plasma-node's pxe provider and the API's server all register through
// it, so the rules live here once:
//
//   - a registration's BMC password is kept only once the registration it
//     belongs to is accepted ([Register]); a refused one (a pin another
//     registration holds, an invalid field) leaves the kept password as
//     it was;
//   - the password goes with the registration, by every path that
//     removes one ([Unregister]), once no registration of the name names
//     a BMC.
//
// [Provisioner] adds what both binaries manage besides registrations,
// again one way for both sides: the window's state, the events and the
// API tokens, of a state folder ([Local]: opening its stores once,
// creating nothing to read) or through the API.
//
// It also declares, once, the environment variables both binaries and
// the SDK read ([EnvDir], [EnvServer], [EnvStore]…) and the default
// state folder ([DefaultDir]).
//
// It links no server and no BMC driver.
package registrar
