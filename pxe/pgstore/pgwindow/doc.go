// Package pgwindow keeps the window state ([window.Store]) in
// PostgreSQL: the open window's record (one row) and who holds the
// window lock. The lock is a session advisory lock held on a connection
// of its own ([Store.Lock]), so a holder whose process or host died lets
// it go with its session, and [Store.Holder] reads it as none; the row
// beside it names the holder's process, host and address.
//
// It does not run or stop windows: that is the window's (package pxe)
// and the daemon's.
package pgwindow
