// Package eventfile is the file [events.Store]: node-provisioner's event
// log, events.jsonl in the state folder, one JSON event a line, bounded
// in size by rotation to events.jsonl.1. Several processes may append to
// one log (a local power command beside the daemon); readers follow it
// across rotations by an event's id.
//
// It keeps events only: what they mean (installed nodes, a timeline) is
// its callers' business.
package eventfile
