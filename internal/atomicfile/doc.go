// Package atomicfile writes files so that a reader sees either the old
// content or the new one, never a mix, even when the writer is killed.
//
// It does not lock: callers that read, modify and write a file hold a
// lock of their own (see package lockfile).
package atomicfile
