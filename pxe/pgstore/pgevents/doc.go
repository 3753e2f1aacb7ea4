// Package pgevents keeps node-provisioner's events ([events.Store]) in
// PostgreSQL: a table whose bigserial id is the event's id, so every
// host's events are in one order, and a NOTIFY on each append that
// wakes every follower (LISTEN) on every host at once.
//
// Appends are serialised by an advisory lock, so ids are committed in
// their order and a reader resuming after an id never skips one that
// commits later. The table is bounded: once its events hold more than
// the bound, the oldest are dropped down to half of it.
package pgevents
