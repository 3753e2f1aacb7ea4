package sitewindow_test

import "time"

func at(d time.Duration) time.Time { return time.Now().Add(d).UTC().Round(time.Millisecond) }
