// Package sitewindowtest is the conformance suite of the site window's
// stores ([sitewindow.Store]): every implementation runs [Run]. [RunCheck]
// runs one check on any [T], so that the suite's own test feeds it a
// deliberately broken store and sees the check fail.
package sitewindowtest
