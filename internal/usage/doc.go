// Package usage marks the errors that mean bad input (a malformed name, an
// unknown key, a conflicting setting) as against a failure, so that one
// check, plasmanode.IsUsageError, answers for every package of the module.
//
// It does not decide exit codes or words: the binaries do.
package usage
