// Package badinput holds the tables of bad values that every entry point
// of an input (CLI flags, the API, registration files, site settings, the
// pxe provider) is tested against, so that an entry point which forgets a
// check fails its test. Tests only import it.
//
// It checks nothing itself: each input's rule has one home in the package
// that owns the concept, and the tests call the entry points.
package badinput
