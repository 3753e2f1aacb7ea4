//go:build linux

package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/plasmactl/plasma-node/pxe/discovery"
)

// The kernel's IPMI device interface (include/uapi/linux/ipmi.h,
// module ipmi_devintf): requests go to the BMC through the system
// interface address.
const (
	// ipmiDevice is the first IPMI interface's device.
	ipmiDevice = "/dev/ipmi0"
	// ipmiSystemInterfaceAddrType and ipmiBMCChannel:
	// IPMI_SYSTEM_INTERFACE_ADDR_TYPE and IPMI_BMC_CHANNEL.
	ipmiSystemInterfaceAddrType = 0x0c
	ipmiBMCChannel              = 0x0f
	// ipmiResponseRecvType is IPMI_RESPONSE_RECV_TYPE.
	ipmiResponseRecvType = 1
	// ipmiMaxAddrSize is IPMI_MAX_ADDR_SIZE, the address bytes of
	// struct ipmi_addr after its type and channel.
	ipmiMaxAddrSize = 32
)

// ipmiMsg is struct ipmi_msg.
type ipmiMsg struct {
	netfn, cmd uint8
	dataLen    uint16
	data       unsafe.Pointer
}

// ipmiReq is struct ipmi_req (C long is Go int on Linux).
type ipmiReq struct {
	addr    unsafe.Pointer
	addrLen uint32
	msgid   int
	msg     ipmiMsg
}

// ipmiRecv is struct ipmi_recv.
type ipmiRecv struct {
	recvType int32
	addr     unsafe.Pointer
	addrLen  uint32
	msgid    int
	msg      ipmiMsg
}

// ipmiSystemInterfaceAddr is struct ipmi_system_interface_addr.
type ipmiSystemInterfaceAddr struct {
	addrType int32
	channel  int16
	lun      uint8
}

// ipmiAddr is struct ipmi_addr, big enough for any address the kernel
// returns with a message.
type ipmiAddr struct {
	addrType int32
	channel  int16
	data     [ipmiMaxAddrSize]byte
}

// ioctlIOC is the generic Linux ioctl number encoding (_IOC: direction
// in bits 30-31, size in 16-29, type in 8-15, number in 0-7), that of
// amd64 and arm64.
func ioctlIOC(dir, nr, size uintptr) uint {
	return uint(dir<<30 | size<<16 | 'i'<<8 | nr)
}

var (
	// ipmictlSendCommand is IPMICTL_SEND_COMMAND, _IOR('i', 13,
	// struct ipmi_req).
	ipmictlSendCommand = ioctlIOC(2, 13, unsafe.Sizeof(ipmiReq{}))
	// ipmictlReceiveMsgTrunc is IPMICTL_RECEIVE_MSG_TRUNC,
	// _IOWR('i', 11, struct ipmi_recv): a reply longer than the buffer
	// is cut to it.
	ipmictlReceiveMsgTrunc = ioctlIOC(3, 11, unsafe.Sizeof(ipmiRecv{}))
)

// ipmiDev is an open IPMI device.
type ipmiDev struct {
	fd    int
	msgid int
}

// openIPMI waits up to wait for the device to appear (the kernel makes
// it once ipmi_si found the BMC and ipmi_devintf is loaded), checks it
// is a character device and opens it.
func openIPMI(ctx context.Context, dev string, wait time.Duration) (*ipmiDev, error) {
	end := time.Now().Add(wait)
	for {
		st, err := os.Stat(dev)
		if err == nil {
			if st.Mode()&os.ModeCharDevice == 0 {
				return nil, fmt.Errorf("%s is not a character device (%s)", dev, st.Mode().Type())
			}
			break
		}
		if !errors.Is(err, os.ErrNotExist) || time.Now().After(end) {
			return nil, fmt.Errorf("no IPMI device %s after %s (modules ipmi_si and ipmi_devintf found no BMC): %w", dev, wait, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %s: %w", dev, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	fd, err := unix.Open(dev, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dev, err)
	}
	return &ipmiDev{fd: fd}, nil
}

func (d *ipmiDev) close() { unix.Close(d.fd) }

// request sends one request to the BMC and returns its reply
// (completion code first), at most maxIPMIReply bytes, waiting until
// ctx's deadline: a BMC that never answers ends in an error, not a hang.
func (d *ipmiDev) request(ctx context.Context, netfn, cmd byte, data []byte) ([]byte, error) {
	d.msgid++
	addr := ipmiSystemInterfaceAddr{addrType: ipmiSystemInterfaceAddrType, channel: ipmiBMCChannel}
	req := ipmiReq{addr: unsafe.Pointer(&addr), addrLen: uint32(unsafe.Sizeof(addr)), msgid: d.msgid,
		msg: ipmiMsg{netfn: netfn, cmd: cmd, dataLen: uint16(len(data))}}
	if len(data) > 0 {
		req.msg.data = unsafe.Pointer(&data[0])
	}
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(d.fd), uintptr(ipmictlSendCommand), uintptr(unsafe.Pointer(&req)))
	runtime.KeepAlive(&addr)
	runtime.KeepAlive(data)
	if errno != 0 {
		return nil, fmt.Errorf("send NetFn %#02x command %#02x: %w", netfn, cmd, errno)
	}
	for {
		if err := d.wait(ctx); err != nil {
			return nil, fmt.Errorf("NetFn %#02x command %#02x: %w", netfn, cmd, err)
		}
		var from ipmiAddr
		buf := make([]byte, maxIPMIReply)
		rcv := ipmiRecv{addr: unsafe.Pointer(&from), addrLen: uint32(unsafe.Sizeof(from)),
			msg: ipmiMsg{dataLen: uint16(len(buf)), data: unsafe.Pointer(&buf[0])}}
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(d.fd), uintptr(ipmictlReceiveMsgTrunc), uintptr(unsafe.Pointer(&rcv)))
		runtime.KeepAlive(&from)
		runtime.KeepAlive(buf)
		if errno == unix.EAGAIN {
			continue
		}
		if errno != 0 && errno != unix.EMSGSIZE {
			return nil, fmt.Errorf("receive the reply to NetFn %#02x command %#02x: %w", netfn, cmd, errno)
		}
		if rcv.recvType != ipmiResponseRecvType || rcv.msgid != d.msgid {
			continue // an event or a stale reply
		}
		return buf[:min(int(rcv.msg.dataLen), len(buf))], nil
	}
}

// errNoAnswer is wrapped when the BMC does not answer by the deadline.
var errNoAnswer = errors.New("the BMC did not answer in time")

// wait waits until the device has a message to receive, or ctx's
// deadline (which it must have) passes.
func (d *ipmiDev) wait(ctx context.Context) error {
	for {
		dl, ok := ctx.Deadline()
		if !ok {
			return errors.New("waiting for the BMC without a deadline")
		}
		ms := int(time.Until(dl).Milliseconds())
		if ms <= 0 {
			return errNoAnswer
		}
		pfd := []unix.PollFd{{Fd: int32(d.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(pfd, ms)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return fmt.Errorf("wait for the reply: %w", err)
		case n == 0:
			return errNoAnswer
		}
		return nil
	}
}

// ipmiLANAddress reads the BMC's LAN address through dev: Get LAN
// Configuration Parameters 3 and 4 of channel 1, then of the other
// channels Get Channel Info names 802.3 LAN, until one gives a usable
// address. Each request waits at most perRequest; a request the BMC
// does not answer ends the search.
func ipmiLANAddress(ctx context.Context, dev string, wait, perRequest time.Duration) (netip.Addr, string, error) {
	d, err := openIPMI(ctx, dev, wait)
	if err != nil {
		return netip.Addr{}, "", err
	}
	defer d.close()
	ask := func(netfn, cmd byte, data []byte) ([]byte, error) {
		ctx, cancel := context.WithTimeout(ctx, perRequest)
		defer cancel()
		return d.request(ctx, netfn, cmd, data)
	}
	var first error
	for ch := byte(firstLANChannel); ch <= maxIPMIChannel; ch++ {
		if ch != firstLANChannel {
			info, err := ask(netFnApp, cmdGetChannelInfo, []byte{ch})
			if err != nil {
				return netip.Addr{}, "", fmt.Errorf("%w (channel %d: Get Channel Info: %w)", first, ch, err)
			}
			if !isLANChannel(info) {
				continue
			}
		}
		ip, err := ask(netFnTransport, cmdGetLANConfig, lanConfigRequest(ch, lanParamIP))
		if err != nil {
			return netip.Addr{}, "", fmt.Errorf("channel %d: %w", ch, err)
		}
		src, _ := ask(netFnTransport, cmdGetLANConfig, lanConfigRequest(ch, lanParamIPSource))
		a, source, err := lanAddress(ip, src)
		if err == nil {
			return a, source, nil
		}
		if first == nil {
			first = fmt.Errorf("channel %d: %w", ch, err)
		}
	}
	return netip.Addr{}, "", first
}

// IPMI in-band read bounds: how long the agent waits for the device to
// appear, for one reply, and for the whole read.
const (
	ipmiDeviceWait = 10 * time.Second
	ipmiReplyWait  = 5 * time.Second
	ipmiReadWait   = 30 * time.Second
)

// readIPMIBMC sets the report's BMC address from the IPMI BMC's LAN
// configuration when the firmware names an IPMI BMC and no Redfish
// host interface gave an address; on failure the report keeps no
// address and the log says why.
func readIPMIBMC(ctx context.Context, log *slog.Logger, rep *discovery.Report) {
	if rep.BMCAddress != "" || rep.BMCIPMI == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, ipmiReadWait)
	defer cancel()
	start := time.Now()
	a, source, err := ipmiLANAddress(ctx, ipmiDevice, ipmiDeviceWait, ipmiReplyWait)
	if err != nil {
		log.Warn("no BMC address through the IPMI device", "device", ipmiDevice, "err", err, "took", time.Since(start).Round(time.Millisecond))
		return
	}
	rep.BMCAddress, rep.BMCPort, rep.BMCKind = a.String(), ipmiLANPort, discovery.BMCIPMI
	log.Info("BMC address through the IPMI device", "address", a.String(), "source", source, "took", time.Since(start).Round(time.Millisecond))
}
