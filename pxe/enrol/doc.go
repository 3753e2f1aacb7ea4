// Package enrol is node-provisioner's enrolment rules: the rule that
// turns a machine of the discovery inbox into a registration (what it
// matches, the name template and its counter, the disks, the address,
// the answer settings, the BMC, the limit, the priority and the mode),
// its strict YAML/JSON decoding, the matching that says for each
// machine which rule takes it or why none does, the [Store] that keeps
// the rules and their counters for every host of a site, and
// [Enroller], which makes the registration when a report arrives.
//
// It serves nothing and keeps no files itself: the rules' stores are
// package pxe/store/folder's and pxe/store/postgres's (the conformance
// suite is package enrol/enroltest), registrations are package
// pxe/registry's, and the HTTP API and the commands call this package.
package enrol
