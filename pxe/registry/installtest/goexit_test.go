package installtest_test

import "runtime"

func runtimeGoexit() { runtime.Goexit() }
