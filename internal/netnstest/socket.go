package netnstest

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// ListenPacketIn opens a UDP socket in the network namespace ns (made
// by ip netns add), bound to interface iface when it is not empty: the
// test's own process then talks from inside the lab, without a helper
// process. The socket stays in ns after the call; the calling goroutine's
// thread returns to its own namespace.
func ListenPacketIn(ns, iface, network, addr string) (net.PacketConn, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	self, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
	if err != nil {
		return nil, err
	}
	defer self.Close()
	target, err := os.Open("/var/run/netns/" + ns)
	if err != nil {
		return nil, fmt.Errorf("namespace %s: %w", ns, err)
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		return nil, fmt.Errorf("enter namespace %s: %w", ns, err)
	}
	defer func() {
		if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
			panic("netnstest: cannot return to the test's namespace: " + err.Error())
		}
	}()
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		if iface == "" {
			return nil
		}
		var serr error
		if err := rc.Control(func(fd uintptr) { serr = unix.BindToDevice(int(fd), iface) }); err != nil {
			return err
		}
		return serr
	}}
	return lc.ListenPacket(context.Background(), network, addr)
}
