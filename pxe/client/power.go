package client

import (
	"context"
	"net/url"

	"github.com/plasmactl/plasma-node/pxe/apitype"
)

// BootReply says what [Client.Boot] did.
type BootReply = apitype.BootReply

// Power runs a power action (status, on, off or cycle) through node
// name's BMC on the server and returns the power state after it. A
// status is retried on connection errors; the others are not. Refusals
// match apitype.ErrPowerRefused (no BMC), apitype.ErrBMCFailed (the BMC's
// words) or registry.ErrNotFound.
func (c *Client) Power(ctx context.Context, name, action string) (string, error) {
	var out apitype.PowerReply
	req := request{method: "POST", path: "/registrations/" + url.PathEscape(name) + "/power", body: apitype.PowerRequest{Action: action}, op: opPower}
	if action == "status" {
		req = request{method: "GET", path: "/registrations/" + url.PathEscape(name) + "/power", op: opPower, retry: true}
	}
	err := c.do(ctx, req, &out)
	return out.Power, err
}

// Boot sets node name's next boot to PXE once and powers it on (or
// cycles it) through its BMC on the server; the server refuses
// (apitype.ErrPowerRefused) unless the window is open and the registration
// pending. It is not retried.
func (c *Client) Boot(ctx context.Context, name string) (BootReply, error) {
	var out BootReply
	err := c.do(ctx, request{method: "POST", path: "/registrations/" + url.PathEscape(name) + "/boot", op: opPower}, &out)
	return out, err
}

// Reinstall re-arms the installed registration name as a new one-shot,
// keeping its data pools unless req.WipeData, and, when it has a BMC,
// boots its machine into the installer. It is
// not retried: a second call after the first re-armed finds nothing
// installed of that name.
func (c *Client) Reinstall(ctx context.Context, name string, req apitype.ReinstallRequest) (apitype.ReinstallReply, error) {
	var out apitype.ReinstallReply
	err := c.do(ctx, request{method: "POST", path: "/registrations/" + url.PathEscape(name) + "/reinstall", body: req, op: opReinstall}, &out)
	return out, err
}
