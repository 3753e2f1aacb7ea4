package providers

// ResolveCredentials is resolveCredentials, for the external tests.
var ResolveCredentials = resolveCredentials
