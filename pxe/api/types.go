package api

import "github.com/plasmactl/plasma-node/pxe/apitype"

// The API's wire types live in package apitype, which clients import
// without linking this server; these names keep the handler's code and
// its embedders' readable.

// Prefix is the path every endpoint is under.
const Prefix = apitype.Prefix

// MaxBody is the largest request body taken: 64 KiB.
const MaxBody = apitype.MaxBody

// IdempotencyHeader is the header that makes a POST safe to repeat.
const IdempotencyHeader = apitype.IdempotencyHeader

// FromNow as Last-Event-ID asks the event stream for new events only.
const FromNow = apitype.FromNow

// Errors a [Power] wraps so that the API answers with the right status.
var (
	// ErrPowerRefused is [apitype.ErrPowerRefused]: 409.
	ErrPowerRefused = apitype.ErrPowerRefused
	// ErrBMCFailed is [apitype.ErrBMCFailed]: 502, with the BMC's words.
	ErrBMCFailed = apitype.ErrBMCFailed
)

type (
	// Error is [apitype.Error].
	Error = apitype.Error
	// Health is [apitype.Health].
	Health = apitype.Health
	// Build is [apitype.Build].
	Build = apitype.Build
	// RegisterResponse is [apitype.RegisterResponse].
	RegisterResponse = apitype.RegisterResponse
	// PinMove is [apitype.PinMove].
	PinMove = apitype.PinMove
	// OpenWindowRequest is [apitype.OpenWindowRequest].
	OpenWindowRequest = apitype.OpenWindowRequest
	// WindowOptions is [apitype.WindowOptions].
	WindowOptions = apitype.WindowOptions
	// WindowStatus is [apitype.WindowStatus].
	WindowStatus = apitype.WindowStatus
	// PowerRequest is [apitype.PowerRequest].
	PowerRequest = apitype.PowerRequest
	// PowerReply is [apitype.PowerReply].
	PowerReply = apitype.PowerReply
	// BootReply is [apitype.BootReply].
	BootReply = apitype.BootReply
	// ReinstallRequest is [apitype.ReinstallRequest].
	ReinstallRequest = apitype.ReinstallRequest
	// ReinstallReply is [apitype.ReinstallReply].
	ReinstallReply = apitype.ReinstallReply
	// TokenInfo is [apitype.TokenInfo].
	TokenInfo = apitype.TokenInfo
	// CreateTokenRequest is [apitype.CreateTokenRequest].
	CreateTokenRequest = apitype.CreateTokenRequest
	// CreatedToken is [apitype.CreatedToken].
	CreatedToken = apitype.CreatedToken
)
