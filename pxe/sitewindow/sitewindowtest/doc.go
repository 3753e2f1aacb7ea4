// Package sitewindowtest is the conformance suite of the site window's
// stores ([sitewindow.Store]): every implementation runs [Run].
package sitewindowtest
