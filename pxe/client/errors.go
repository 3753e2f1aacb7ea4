package client

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"

	"github.com/plasmactl/plasma-node/pxe/secret"

	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/apitype"
	"github.com/plasmactl/plasma-node/pxe/enrol"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/window"
)

var (
	// ErrUnauthorized: the server refused the token (missing, wrong or
	// revoked): 401.
	ErrUnauthorized = errors.New("the server refused the token")
	// ErrForbidden: the token lacks the scope for the request: 403.
	ErrForbidden = errors.New("the token lacks the scope for this")
	// ErrCertificate: the server's certificate is not the pinned one (or,
	// without a pin, not trusted); nothing was sent.
	ErrCertificate = errors.New("server certificate refused")
	// ErrRateLimited: the server refuses this address for a while after
	// too many failed authentications: 429.
	ErrRateLimited = errors.New("refused for too many failed authentications")
)

// op is what a request did, for the mapping of its refusals.
type op int

const (
	opRead op = iota
	opRegister
	opUnregister
	opNode
	opOpenWindow
	opCloseWindow
	opToken
	opPower
	opReinstall
	opRule
	opSecret
)

// Error is a refusal of the server.
type Error struct {
	// Status is the HTTP status.
	Status int
	// Message is the server's message.
	Message string
	// Field is the request field at fault, when the server named one.
	Field string
	op    op
}

// Error returns the server's message; for 401, 403 and 5xx (but a
// BMC's failure) with the status.
func (e *Error) Error() string {
	switch {
	case (e.op == opPower || e.op == opReinstall) && e.Status == http.StatusBadGateway && e.Message != "":
		return e.Message // the BMC's words, as on the server's host
	case e.Status == http.StatusUnauthorized, e.Status == http.StatusForbidden, e.Status == http.StatusTooManyRequests, e.Status >= 500:
		return fmt.Sprintf("node-provisioner API: %d %s: %s", e.Status, http.StatusText(e.Status), e.Message)
	case e.Message == "":
		return fmt.Sprintf("node-provisioner API: %d %s", e.Status, http.StatusText(e.Status))
	}
	return e.Message
}

var fieldErrors = map[string]error{
	"name": registry.ErrInvalidName, "macs": registry.ErrInvalidMAC, "boot_disk": registry.ErrInvalidBootDisk,
	"pools": registry.ErrInvalidPool, "serial": registry.ErrInvalidSerial, "uuid": registry.ErrInvalidUUID,
	"ssh_keys": registry.ErrInvalidSSHKey,
}

// UsageError reports whether the refusal is bad input, as the local
// registry.ErrInvalidRegistration it matches is.
func (e *Error) UsageError() bool {
	return e.Is(registry.ErrInvalidRegistration) || e.Is(enrol.ErrInvalidRule) || e.Is(secret.ErrInvalidName) || e.Is(secret.ErrInvalidPassword)
}

// Is maps the refusal to the domain's errors (see the package comment).
func (e *Error) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.Status == http.StatusUnauthorized
	case ErrForbidden:
		return e.Status == http.StatusForbidden
	case ErrRateLimited:
		return e.Status == http.StatusTooManyRequests
	case registry.ErrNotFound:
		return e.Status == http.StatusNotFound && (e.op == opUnregister || e.op == opNode || e.op == opPower || e.op == opReinstall)
	case registry.ErrPinTaken:
		return e.op == opRegister && e.Status == http.StatusConflict
	case registry.ErrInvalidRegistration:
		return e.op == opRegister && (e.Status == http.StatusUnprocessableEntity || e.Status == http.StatusBadRequest || e.Status == http.StatusConflict)
	case window.ErrOpen:
		return e.op == opOpenWindow && e.Status == http.StatusConflict
	case apitoken.ErrNotFound:
		return e.op == opToken && e.Status == http.StatusNotFound
	case apitoken.ErrExists:
		return e.op == opToken && e.Status == http.StatusConflict
	case apitoken.ErrInvalidName:
		return e.op == opToken && e.Status == http.StatusUnprocessableEntity && e.Field == "name"
	case apitoken.ErrInvalidScope:
		return e.op == opToken && e.Status == http.StatusUnprocessableEntity && e.Field == "scope"
	case apitype.ErrPowerRefused:
		return (e.op == opPower || e.op == opReinstall) && e.Status == http.StatusConflict
	case window.ErrClosed:
		return e.op == opReinstall && e.Status == http.StatusConflict
	case enrol.ErrInvalidRule:
		return e.op == opRule && (e.Status == http.StatusUnprocessableEntity || e.Status == http.StatusBadRequest)
	case enrol.ErrPriorityTaken:
		return e.op == opRule && e.Status == http.StatusConflict && e.Field == "priority"
	case enrol.ErrExists:
		return e.op == opRule && e.Status == http.StatusConflict && e.Field == "name"
	case enrol.ErrNotFound:
		return e.op == opRule && e.Status == http.StatusNotFound
	case secret.ErrInvalidName:
		return e.op == opSecret && e.Status == http.StatusUnprocessableEntity && e.Field == "name"
	case secret.ErrInvalidPassword:
		return e.op == opSecret && e.Status == http.StatusUnprocessableEntity && e.Field == "value"
	case secret.ErrNoSiteSecret, fs.ErrNotExist:
		return e.op == opSecret && e.Status == http.StatusNotFound
	case apitype.ErrBMCFailed:
		return (e.op == opPower || e.op == opReinstall) && e.Status == http.StatusBadGateway
	}
	if e.op == opRegister && (e.Status == http.StatusUnprocessableEntity || e.Status == http.StatusConflict) {
		if fe, ok := fieldErrors[e.Field]; ok && fe == target && e.Status != http.StatusConflict {
			return true
		}
	}
	if (e.op == opUnregister || e.op == opNode) && e.Status == http.StatusBadRequest && e.Field == "name" {
		return target == registry.ErrInvalidName || target == registry.ErrInvalidRegistration
	}
	return false
}
