// Package pgdiscovery keeps the discovery inbox ([discovery.Store]) in
// PostgreSQL, a row per discovered machine, so that a machine posted to
// one host is listed by every host of the store. Each post applies the
// rule of [discovery.Put] (one entry per machine, matched by a shared MAC
// or a real DMI serial; expiry; the bound) in one transaction holding a
// lock on the table, so that posts racing from several hosts are applied
// one at a time.
package pgdiscovery
