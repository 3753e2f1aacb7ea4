// Package providers defines the [Provider] interface each infrastructure
// provider implements (credentials, configuration of pools and adopted
// servers, destructive attributes, server ids, decoding of outputs) and
// [Set], the providers a project may name. The providers themselves are
// its subpackages; package builtin gathers them into the default set, and
// a program may make a set of its own with [NewSet].
//
// It runs nothing: the tofu package plans and applies what a Provider
// configures, and the plasmanode operations turn its [Server] values into
// node files.
package providers
