package pxe

import "flag"

// update rewrites the golden files under testdata/ instead of comparing.
var update = flag.Bool("update", false, "rewrite golden files")
