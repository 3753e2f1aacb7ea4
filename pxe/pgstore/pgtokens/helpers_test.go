package pgtokens_test

import "time"

var timeZero time.Time
