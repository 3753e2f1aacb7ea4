// Package bmc drives a machine's baseboard management controller: power
// status, on, off, cycle and reset, and a one-time network (PXE) boot in
// UEFI or legacy mode. One small interface, [Controller], has two
// drivers: Redfish over HTTPS ([NewRedfish], here) and IPMI over LAN
// (lanplus, RMCP+; package ipmi, kept apart so that this package links no
// IPMI stack).
//
// [Parse] reads an endpoint such as ipmi://10.0.0.5 or
// redfish://bmc1.example/System.Embedded.1; [ParseCipherSuite],
// [ValidateIPMI] and [ParseBootMode] check the settings. Errors are typed in the BMC's terms: [ErrUnreachable],
// [ErrAuthRefused] and [ErrBMC] (the BMC answered with an error, kept in
// its own words). Transient failures (no answer, a busy BMC, HTTP 502,
// 503, 504) are retried with backoff; nothing else is. No driver powers a
// machine off unless asked to.
//
// A password is only ever held in [Credentials]; no error, log line or
// event of this package carries it.
package bmc
