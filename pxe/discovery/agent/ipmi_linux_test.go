//go:build linux

package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestIPMIStructLayout: the structs and ioctl numbers are those of
// include/uapi/linux/ipmi.h on amd64 and arm64 (struct ipmi_req 40
// bytes, struct ipmi_recv 48; IPMICTL_SEND_COMMAND 0x8028690d,
// IPMICTL_RECEIVE_MSG_TRUNC 0xc030690b).
func TestIPMIStructLayout(t *testing.T) {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skipf("layout checked on amd64 and arm64, not %s", runtime.GOARCH)
	}
	got := [6]uintptr{unsafe.Sizeof(ipmiMsg{}), unsafe.Sizeof(ipmiReq{}), unsafe.Sizeof(ipmiRecv{}), unsafe.Offsetof(ipmiRecv{}.msg),
		uintptr(ipmictlSendCommand), uintptr(ipmictlReceiveMsgTrunc)}
	if want := [6]uintptr{16, 40, 48, 32, 0x8028690d, 0xc030690b}; got != want {
		t.Errorf("sizes, ipmi_recv.msg offset, ioctl numbers = %#x, want %#x", got, want)
	}
}

// TestIPMILANAddressWithoutADevice: with no IPMI device, the read ends
// after the wait with an error naming the device, and a file that is
// not a character device is refused at once.
func TestIPMILANAddressWithoutADevice(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	_, _, err := ipmiLANAddress(context.Background(), filepath.Join(dir, "ipmi0"), 300*time.Millisecond, time.Second)
	if err == nil || !strings.Contains(err.Error(), "no IPMI device") || time.Since(start) > 3*time.Second {
		t.Errorf("no device: %v after %s; want a \"no IPMI device\" error after 300ms", err, time.Since(start))
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o600)
	if _, _, err := ipmiLANAddress(context.Background(), file, time.Minute, time.Second); err == nil || !strings.Contains(err.Error(), "not a character device") {
		t.Errorf("a regular file: %v; want it refused as not a character device", err)
	}
}

// TestIPMIWaitEndsAtItsDeadline: a device with no reply (a pipe nothing
// is written to) ends the wait at the deadline with errNoAnswer, not a
// hang; one with a message to read ends it at once.
func TestIPMIWaitEndsAtItsDeadline(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	d := &ipmiDev{fd: p[0]}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := d.wait(ctx); !errors.Is(err, errNoAnswer) || time.Since(start) > 2*time.Second {
		t.Errorf("no reply: %v after %s; want errNoAnswer after 200ms", err, time.Since(start))
	}
	if err := d.wait(context.Background()); err == nil {
		t.Error("a wait without a deadline: no error")
	}
	unix.Write(p[1], []byte{0})
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.wait(ctx); err != nil {
		t.Errorf("a message to read: %v", err)
	}
}
