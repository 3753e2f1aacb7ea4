// Package fakeredfish is a Redfish BMC for tests: the DMTF calls a
// client needs to power a machine and set a one-time boot override, with
// a real service's refusals. The service root, the Systems collection,
// one ComputerSystem (PowerState, Boot, Actions/ComputerSystem.Reset with
// its AllowableValues, an ETag) and SessionService/Sessions. Every
// resource but the root needs HTTP Basic or an X-Auth-Token (else 401);
// a PATCH whose If-Match is not the current ETag gets 412; a bad
// ResetType, an unknown property or a value outside AllowableValues gets
// 400 with a Base message registry error body.
//
// Power goes through a [Hook]: [CommandHook] runs the same chassis
// control command as ipmi_sim's chassis_control ("HOOK get power",
// "HOOK set power 1", "HOOK set boot pxe", "HOOK set reset 1"), so a
// Redfish power-on starts the same QEMU machine an IPMI one would.
// Without a hook the fake keeps the power state itself.
//
// With [MediaConfig] it has VirtualMedia, under the Manager (actions) or
// under the System (PATCH only), and behaves as a BMC does with an
// image: it HEADs it and refuses, with a Redfish error, one it cannot
// fetch; then downloads it in parallel Range requests, bounded in size
// and time, and reports Inserted, Image and ConnectedVia.
package fakeredfish
