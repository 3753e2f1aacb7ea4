package tftp

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/plasmactl/plasma-node/internal/netnstest"
)

// The socket that takes read requests holds a boot storm's burst: its
// receive buffer is requestReadBuffer, or as much as net.core.rmem_max
// allows (the kernel reports twice what was set).
func TestListenAsksForALargeReceiveBuffer(t *testing.T) {
	data, err := os.ReadFile("/proc/sys/net/core/rmem_max")
	if err != nil {
		netnstest.Missing(t, "net.core.rmem_max unreadable: %v", err)
	}
	rmemMax, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := Listen(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	raw, err := conn.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var got int
	var gerr error
	if err := raw.Control(func(fd uintptr) {
		got, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF)
	}); err != nil || gerr != nil {
		t.Fatal(err, gerr)
	}
	if want := min(requestReadBuffer, rmemMax); got/2 < want {
		t.Errorf("SO_RCVBUF = %d (kernel's doubled value), want at least 2 x %d", got, want)
	}
}
