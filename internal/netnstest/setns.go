package netnstest

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// In runs f on an OS thread moved into the network namespace ns (one
// "ip netns add" made, so /var/run/netns/<ns>), and returns its error.
// The sockets f opens live in ns, also when other goroutines use them
// later, so a test can play a lab's client without a second process.
// The thread is never moved back: it ends with f.
func In(ns string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		// Never unlocked: the goroutine's end takes the thread with it,
		// so no other goroutine runs in ns.
		runtime.LockOSThread()
		fd, err := unix.Open("/var/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- fmt.Errorf("open network namespace %s: %w", ns, err)
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("enter network namespace %s: %w", ns, err)
			return
		}
		errc <- f()
	}()
	return <-errc
}
