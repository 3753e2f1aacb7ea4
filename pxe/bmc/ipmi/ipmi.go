// Package ipmi is the IPMI over LAN (lanplus, RMCP+) driver of
// [bmc.Controller], on github.com/bougou/go-ipmi. It is a package of its
// own so that programs that only parse or store BMC endpoints (package
// bmc) do not link an IPMI stack.
package ipmi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/bougou/go-ipmi/pkg/client"
	"github.com/bougou/go-ipmi/pkg/command/chassis"
	"github.com/bougou/go-ipmi/pkg/types"

	"github.com/plasmactl/plasma-node/pxe/bmc"
)

// DefaultPort is IPMI over LAN's UDP port.
const DefaultPort = 623

// ipmiController is the IPMI over LAN (lanplus) driver. It opens one
// RMCP+ session on first use and keeps it until Close; a call that fails
// on the network drops it and the next attempt opens a new one.
type ipmiController struct {
	e     bmc.Endpoint
	cred  bmc.Credentials
	o     bmc.Options
	suite types.CipherSuiteID
	priv  types.PrivilegeLevel

	mu sync.Mutex
	c  *client.Client
}

// New returns the driver for e (cipher suite and privilege from o, 3 and
// operator by default; suite 0 is refused). It does not contact the BMC:
// the first call opens a session, which Close ends.
func New(e bmc.Endpoint, c bmc.Credentials, o bmc.Options) (bmc.Controller, error) {
	if e.Protocol != bmc.IPMI {
		return nil, fmt.Errorf("%w: %s is not an IPMI endpoint", bmc.ErrInvalidEndpoint, e)
	}
	suite, priv, err := bmc.IPMISettings(o.CipherSuite, o.Privilege)
	if err != nil {
		return nil, err
	}
	if c.User == "" {
		return nil, fmt.Errorf("%w: an IPMI BMC needs a user name", bmc.ErrInvalidEndpoint)
	}
	d := &ipmiController{e: e, cred: c, o: o.WithDefaults(), suite: types.CipherSuiteID(suite), priv: types.PrivilegeLevelOperator}
	if priv == bmc.PrivilegeAdministrator {
		d.priv = types.PrivilegeLevelAdministrator
	}
	return d, nil
}

func (d *ipmiController) Protocol() string { return bmc.IPMI }

// session returns the open session, opening one when there is none.
func (d *ipmiController) session(ctx context.Context, op string) (*client.Client, error) {
	if d.c != nil {
		return d.c, nil
	}
	port := d.e.Port
	if port == 0 {
		port = DefaultPort
	}
	c, err := client.NewClient(d.e.Host, port, d.cred.User, d.cred.Password)
	if err != nil {
		return nil, &bmc.Error{Op: op, Kind: bmc.ErrInvalidEndpoint, Said: "the user name is too long"}
	}
	// Per exchange: one retransmission after Timeout/2, so an absent BMC
	// costs about Timeout, not the library's 5 s.
	c.WithInterface(client.InterfaceLanplus).WithCipherSuiteID(d.suite).WithMaxPrivilegeLevel(d.priv).
		WithTimeout(max(d.o.Timeout/2, 100*time.Millisecond)).WithRetry(1)
	cctx, cancel := context.WithTimeout(ctx, 2*d.o.Timeout)
	defer cancel()
	start := time.Now()
	if err := c.Connect(cctx); err != nil {
		closeNow(c)
		return nil, d.classify(op, err)
	}
	d.o.Logger.Debug("IPMI session open", "bmc", d.e.String(), "suite", int(d.suite), "took", time.Since(start))
	d.c = c
	return c, nil
}

// call runs f on a session, with retries for transient failures.
func (d *ipmiController) call(ctx context.Context, op string, f func(context.Context, *client.Client) error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return bmc.Retry(ctx, d.o, op, func(ctx context.Context) error {
		c, err := d.session(ctx, op)
		if err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, 2*d.o.Timeout)
		defer cancel()
		if err := f(cctx, c); err != nil {
			be := d.classify(op, err)
			if be.Kind == bmc.ErrUnreachable {
				closeNow(d.c)
				d.c = nil
			}
			return be
		}
		return nil
	})
}

// classify turns a go-ipmi error into an [*Error] in the BMC's words.
func (d *ipmiController) classify(op string, err error) *bmc.Error {
	var rsp *types.ResponseError
	var rmcp *types.RmcpStatusError
	var ne net.Error
	// go-ipmi's Connect joins the per-suite errors with %v, so its
	// session errors are recognised by their words.
	msg := err.Error()
	switch {
	case errors.Is(err, client.ErrRAKPAuthentication), strings.Contains(msg, client.ErrRAKPAuthentication.Error()):
		return &bmc.Error{Op: op, Kind: bmc.ErrAuthRefused, Said: "RAKP authentication failed (wrong user or password)"}
	case errors.As(err, &rmcp):
		return &bmc.Error{Op: op, Kind: bmc.ErrAuthRefused, Said: rmcp.Error()}
	case strings.Contains(msg, "RMCP+ status"):
		return &bmc.Error{Op: op, Kind: bmc.ErrAuthRefused, Said: msg[strings.Index(msg, "RMCP+ status"):]}
	case errors.As(err, &rsp):
		cc := rsp.CompletionCode()
		said := fmt.Sprintf("completion code %#02x: %s", uint8(cc), cc)
		switch cc {
		case types.CodeInsufficientPrivilege:
			return &bmc.Error{Op: op, Kind: bmc.ErrAuthRefused, Said: said}
		case types.CodeNodeBusy, types.CodeProcessTimeout:
			return &bmc.Error{Op: op, Kind: bmc.ErrBMC, Said: said, Transient: true}
		}
		return &bmc.Error{Op: op, Kind: bmc.ErrBMC, Said: said}
	case errors.As(err, &ne), errors.Is(err, context.DeadlineExceeded):
		return &bmc.Error{Op: op, Kind: bmc.ErrUnreachable, Said: fmt.Sprintf("no answer from %s/udp (%s)", d.e.HostPort(DefaultPort), lastLine(err)), Transient: true}
	}
	return &bmc.Error{Op: op, Kind: bmc.ErrBMC, Said: lastLine(err)}
}

// closeNow releases a client's socket without waiting for a BMC that
// did not open, or no longer answers, the session.
func closeNow(c *client.Client) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c.Close(ctx)
}

// lastLine keeps the innermost words of a go-ipmi error chain, which
// repeats each layer's prefix ("cmd: … failed, err: …").
func lastLine(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, "err: "); i >= 0 {
		s = s[i+len("err: "):]
	}
	return strings.TrimSpace(strings.ReplaceAll(s, "\n", " "))
}

func (d *ipmiController) PowerStatus(ctx context.Context) (bmc.Power, error) {
	var p bmc.Power
	err := d.call(ctx, "power status", func(ctx context.Context, c *client.Client) error {
		st, err := c.GetChassisStatus(ctx)
		if err != nil {
			return err
		}
		p = bmc.PowerOff
		if st.PowerIsOn {
			p = bmc.PowerOn
		}
		return nil
	})
	return p, err
}

func (d *ipmiController) control(ctx context.Context, op string, ctl chassis.ChassisControl) error {
	return d.call(ctx, op, func(ctx context.Context, c *client.Client) error {
		_, err := c.ChassisControl(ctx, ctl)
		return err
	})
}

func (d *ipmiController) PowerOn(ctx context.Context) error {
	return d.control(ctx, "power on", chassis.ChassisControlPowerUp)
}

func (d *ipmiController) PowerOff(ctx context.Context) error {
	return d.control(ctx, "power off", chassis.ChassisControlPowerDown)
}

func (d *ipmiController) PowerCycle(ctx context.Context) error {
	return d.control(ctx, "power cycle", chassis.ChassisControlPowerCycle)
}

func (d *ipmiController) Reset(ctx context.Context) error {
	return d.control(ctx, "reset", chassis.ChassisControlHardReset)
}

// SetNextBootPXE sets boot flags (parameter 5): valid, this boot only,
// force PXE, EFI or legacy.
func (d *ipmiController) SetNextBootPXE(ctx context.Context, mode bmc.BootMode) error {
	bt := types.BIOSBootTypeEFI
	if mode == bmc.BootLegacy {
		bt = types.BIOSBootTypeLegacy
	}
	return d.call(ctx, "set next boot PXE", func(ctx context.Context, c *client.Client) error {
		return c.SetBootDevice(ctx, types.BootDeviceSelectorForcePXE, bt, false)
	})
}

func (d *ipmiController) Close(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.c == nil {
		return nil
	}
	err := d.c.Close(ctx)
	d.c = nil
	if err != nil {
		return d.classify("close session", err)
	}
	return nil
}
