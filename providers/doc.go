// Package providers defines the [Provider] interface each infrastructure
// provider implements (credentials, configuration of pools and adopted
// servers, destructive attributes, server ids, decoding of outputs) and
// the registry the provider subpackages add themselves to.
//
// It runs nothing: the tofu package plans and applies what a Provider
// configures, and the plasmanode operations turn its [Server] values into
// node files.
package providers
