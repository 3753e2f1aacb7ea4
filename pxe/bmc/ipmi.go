package bmc

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
)

// DefaultIPMIPort is IPMI over LAN's UDP port.
const DefaultIPMIPort = 623

// ipmiSuites are the RMCP+ cipher suites the driver accepts: every suite
// with authentication that the IPMI 2.0 table defines. Suite 0 (none)
// is not among them.
var ipmiSuites = map[int]types.CipherSuiteID{
	1: types.CipherSuiteID1, 2: types.CipherSuiteID2, 3: types.CipherSuiteID3,
	6: types.CipherSuiteID6, 7: types.CipherSuiteID7, 8: types.CipherSuiteID8,
	11: types.CipherSuiteID11, 12: types.CipherSuiteID12,
	15: types.CipherSuiteID15, 16: types.CipherSuiteID16, 17: types.CipherSuiteID17,
}

// ipmiController is the IPMI over LAN (lanplus) driver. It opens one
// RMCP+ session on first use and keeps it until Close; a call that fails
// on the network drops it and the next attempt opens a new one.
type ipmiController struct {
	e     Endpoint
	cred  Credentials
	o     Options
	suite types.CipherSuiteID
	priv  types.PrivilegeLevel

	mu sync.Mutex
	c  *client.Client
}

// ValidateIPMI checks a cipher suite and privilege as [Open] would;
// errors wrap [ErrInvalidEndpoint].
func ValidateIPMI(suite int, privilege string) error {
	_, _, err := ipmiSettings(suite, privilege)
	return err
}

func ipmiSettings(suite int, privilege string) (types.CipherSuiteID, types.PrivilegeLevel, error) {
	if suite == 0 {
		suite = 3
	}
	id, ok := ipmiSuites[suite]
	if !ok {
		return 0, 0, fmt.Errorf("%w: IPMI cipher suite %d (want 1-3, 6-8, 11, 12 or 15-17; 3 is the default)", ErrInvalidEndpoint, suite)
	}
	var priv types.PrivilegeLevel
	switch strings.ToLower(privilege) {
	case "", "operator":
		priv = types.PrivilegeLevelOperator
	case "administrator", "admin":
		priv = types.PrivilegeLevelAdministrator
	default:
		return 0, 0, fmt.Errorf("%w: IPMI privilege %q (want operator or administrator; user cannot control power)", ErrInvalidEndpoint, privilege)
	}
	return id, priv, nil
}

// ParseCipherSuite reads an IPMI cipher suite number. Suite 0 (no
// authentication: a BMC then takes any password) is refused, as are
// numbers outside the IPMI 2.0 table. Errors wrap [ErrInvalidEndpoint].
func ParseCipherSuite(s string) (int, error) {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil || fmt.Sprint(n) != strings.TrimSpace(s) {
		return 0, fmt.Errorf("%w: IPMI cipher suite %q is not a number (3 is the default)", ErrInvalidEndpoint, s)
	}
	if n == 0 {
		return 0, fmt.Errorf("%w: IPMI cipher suite 0 has no authentication (the BMC takes any password) and is refused; use 3 or 17", ErrInvalidEndpoint)
	}
	if _, ok := ipmiSuites[n]; !ok {
		return 0, fmt.Errorf("%w: IPMI cipher suite %d (want 1-3, 6-8, 11, 12 or 15-17; 3 is the default)", ErrInvalidEndpoint, n)
	}
	return n, nil
}

func newIPMI(e Endpoint, c Credentials, o Options) (*ipmiController, error) {
	suite, priv, err := ipmiSettings(o.CipherSuite, o.Privilege)
	if err != nil {
		return nil, err
	}
	if c.User == "" {
		return nil, fmt.Errorf("%w: an IPMI BMC needs a user name", ErrInvalidEndpoint)
	}
	return &ipmiController{e: e, cred: c, o: o, suite: suite, priv: priv}, nil
}

func (d *ipmiController) Protocol() string { return "ipmi" }

// session returns the open session, opening one when there is none.
func (d *ipmiController) session(ctx context.Context, op string) (*client.Client, error) {
	if d.c != nil {
		return d.c, nil
	}
	port := d.e.Port
	if port == 0 {
		port = DefaultIPMIPort
	}
	c, err := client.NewClient(d.e.Host, port, d.cred.User, d.cred.Password)
	if err != nil {
		return nil, &Error{Op: op, Kind: ErrInvalidEndpoint, Said: "the user name is too long"}
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
	return retry(ctx, d.o, op, func(ctx context.Context) error {
		c, err := d.session(ctx, op)
		if err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, 2*d.o.Timeout)
		defer cancel()
		if err := f(cctx, c); err != nil {
			be := d.classify(op, err)
			if be.Kind == ErrUnreachable {
				closeNow(d.c)
				d.c = nil
			}
			return be
		}
		return nil
	})
}

// classify turns a go-ipmi error into an [*Error] in the BMC's words.
func (d *ipmiController) classify(op string, err error) *Error {
	var rsp *types.ResponseError
	var rmcp *types.RmcpStatusError
	var ne net.Error
	// go-ipmi's Connect joins the per-suite errors with %v, so its
	// session errors are recognised by their words.
	msg := err.Error()
	switch {
	case errors.Is(err, client.ErrRAKPAuthentication), strings.Contains(msg, client.ErrRAKPAuthentication.Error()):
		return &Error{Op: op, Kind: ErrAuthRefused, Said: "RAKP authentication failed (wrong user or password)"}
	case errors.As(err, &rmcp):
		return &Error{Op: op, Kind: ErrAuthRefused, Said: rmcp.Error()}
	case strings.Contains(msg, "RMCP+ status"):
		return &Error{Op: op, Kind: ErrAuthRefused, Said: msg[strings.Index(msg, "RMCP+ status"):]}
	case errors.As(err, &rsp):
		cc := rsp.CompletionCode()
		said := fmt.Sprintf("completion code %#02x: %s", uint8(cc), cc)
		switch cc {
		case types.CodeInsufficientPrivilege:
			return &Error{Op: op, Kind: ErrAuthRefused, Said: said}
		case types.CodeNodeBusy, types.CodeProcessTimeout:
			return &Error{Op: op, Kind: ErrBMC, Said: said, Transient: true}
		}
		return &Error{Op: op, Kind: ErrBMC, Said: said}
	case errors.As(err, &ne), errors.Is(err, context.DeadlineExceeded):
		return &Error{Op: op, Kind: ErrUnreachable, Said: fmt.Sprintf("no answer from %s/udp (%s)", d.e.hostPort(DefaultIPMIPort), lastLine(err)), Transient: true}
	}
	return &Error{Op: op, Kind: ErrBMC, Said: lastLine(err)}
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

func (d *ipmiController) PowerStatus(ctx context.Context) (Power, error) {
	var p Power
	err := d.call(ctx, "power status", func(ctx context.Context, c *client.Client) error {
		st, err := c.GetChassisStatus(ctx)
		if err != nil {
			return err
		}
		p = PowerOff
		if st.PowerIsOn {
			p = PowerOn
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
func (d *ipmiController) SetNextBootPXE(ctx context.Context, mode BootMode) error {
	bt := types.BIOSBootTypeEFI
	if mode == BootLegacy {
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
