package bmc

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/pxe/tlscert"
)

// maxRedfishBody bounds a Redfish response body read.
const maxRedfishBody = 1 << 20

// redfishController is the Redfish driver (DSP0266): it finds the
// ComputerSystem through the service root and the Systems collection,
// powers it with ComputerSystem.Reset and sets a one-time boot override
// with a PATCH of Boot, sending the system's ETag as If-Match when it
// has one.
type redfishController struct {
	e    Endpoint
	cred Credentials
	o    Options
	base string
	hc   *http.Client

	mu         sync.Mutex
	token      string // X-Auth-Token of the session, if any
	sessionURI string // its Location, deleted by Close
	sys        *redfishSystem
}

// redfishSystem is what the driver reads of a ComputerSystem.
type redfishSystem struct {
	uri         string
	etag        string
	power       string
	resetTarget string
	resetTypes  []string // AllowableValues; empty when not given
	targets     []string // BootSourceOverrideTarget AllowableValues
	hasMode     bool     // exposes BootSourceOverrideMode
	media       string   // its VirtualMedia collection, if any
	managedBy   string   // its first Links.ManagedBy manager, if any
}

// NewRedfish returns the Redfish driver for e. It does not contact the
// BMC; the first call does.
func NewRedfish(e Endpoint, c Credentials, o Options) (Controller, error) {
	if e.Protocol != Redfish {
		return nil, fmt.Errorf("%w: %s is not a Redfish endpoint", ErrInvalidEndpoint, e)
	}
	o = o.WithDefaults()
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.Fingerprint != "" {
		var err error
		if tc, err = tlscert.PinnedTLSConfig(o.Fingerprint); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidEndpoint, err)
		}
	}
	if c.User == "" {
		return nil, fmt.Errorf("%w: a Redfish BMC needs a user name", ErrInvalidEndpoint)
	}
	tr := &http.Transport{TLSClientConfig: tc, TLSHandshakeTimeout: o.Timeout, ResponseHeaderTimeout: o.Timeout, MaxIdleConns: 2, Proxy: nil}
	hc := &http.Client{Transport: tr, Timeout: 2 * o.Timeout,
		// A redirect could carry the credentials elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &redfishController{e: e, cred: c, o: o, base: "https://" + e.HostPort(443), hc: hc}, nil
}

func (d *redfishController) Protocol() string { return Redfish }

// redfishReply is one HTTP exchange's outcome.
type redfishReply struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request with the driver's authentication and turns
// transport failures and error statuses into [*Error].
func (d *redfishController) do(ctx context.Context, op, method, uri string, body any, hdr map[string]string) (*redfishReply, error) {
	if !strings.HasPrefix(uri, "/redfish/") {
		return nil, &Error{Op: op, Kind: ErrBMC, Said: fmt.Sprintf("the BMC pointed at %q, not a /redfish/ path", uri)}
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, d.base+uri, rd)
	if err != nil {
		return nil, &Error{Op: op, Kind: ErrInvalidEndpoint, Said: err.Error()}
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("OData-Version", "4.0")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if d.token != "" {
		req.Header.Set("X-Auth-Token", d.token)
	} else if !strings.HasSuffix(uri, "/Sessions") || method != http.MethodPost {
		req.SetBasicAuth(d.cred.User, d.cred.Password)
	}
	resp, err := d.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: %w", op, ctx.Err())
		}
		said := err.Error()
		var ce *tls.CertificateVerificationError
		pin := strings.Contains(said, "tls pin:") || errors.As(err, &ce)
		if pin {
			return nil, &Error{Op: op, Kind: ErrUnreachable, Said: "TLS: " + tlsWords(said)}
		}
		return nil, &Error{Op: op, Kind: ErrUnreachable, Said: fmt.Sprintf("%s %s: %s", method, d.base+uri, unwrapURLError(err)), Transient: true}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxRedfishBody+1))
	if err != nil {
		return nil, &Error{Op: op, Kind: ErrUnreachable, Said: "reading the reply: " + err.Error(), Transient: true}
	}
	if len(b) > maxRedfishBody {
		return nil, &Error{Op: op, Kind: ErrBMC, Said: fmt.Sprintf("reply of %s over %d bytes", uri, maxRedfishBody)}
	}
	r := &redfishReply{status: resp.StatusCode, header: resp.Header, body: b}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return r, nil
	}
	said := fmt.Sprintf("%s %s: HTTP %d", method, uri, resp.StatusCode)
	if m := redfishMessage(b); m != "" {
		said += ": " + m
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		return r, &Error{Op: op, Kind: ErrAuthRefused, Said: said}
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout, http.StatusTooManyRequests:
		return r, &Error{Op: op, Kind: ErrBMC, Said: said, Transient: true}
	}
	return r, &Error{Op: op, Kind: ErrBMC, Said: said}
}

func unwrapURLError(err error) string {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) && ue.Unwrap() != nil {
		return ue.Unwrap().Error()
	}
	return err.Error()
}

func tlsWords(s string) string {
	if i := strings.Index(s, "tls pin:"); i >= 0 {
		return s[i:]
	}
	if i := strings.Index(s, "tls:"); i >= 0 {
		return s[i:]
	}
	return s
}

// redfishMessage returns a Redfish error body's message and its extended
// messages, or "".
func redfishMessage(b []byte) string {
	var e struct {
		Error struct {
			Code     string `json:"code"`
			Message  string `json:"message"`
			Extended []struct {
				Message string `json:"Message"`
			} `json:"@Message.ExtendedInfo"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &e) != nil {
		return ""
	}
	parts := []string{}
	if e.Error.Message != "" {
		parts = append(parts, e.Error.Message)
	}
	for _, x := range e.Error.Extended {
		if x.Message != "" && x.Message != e.Error.Message {
			parts = append(parts, x.Message)
		}
	}
	return strings.Join(parts, "; ")
}

// getJSON GETs uri into v.
func (d *redfishController) getJSON(ctx context.Context, op, uri string, v any) (*redfishReply, error) {
	r, err := d.do(ctx, op, http.MethodGet, uri, nil, nil)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(r.body, v); err != nil {
		return r, &Error{Op: op, Kind: ErrBMC, Said: fmt.Sprintf("GET %s: not Redfish JSON: %v", uri, err)}
	}
	return r, nil
}

type odataID struct {
	ID string `json:"@odata.id"`
}

// login opens a session when Options.Session asks for one.
func (d *redfishController) login(ctx context.Context, op string) error {
	if !d.o.Session || d.token != "" {
		return nil
	}
	var root struct {
		Links struct {
			Sessions odataID `json:"Sessions"`
		} `json:"Links"`
	}
	// The service root needs no authentication (DSP0266 "Service root").
	if _, err := d.getJSON(ctx, op, "/redfish/v1/", &root); err != nil {
		return err
	}
	uri := root.Links.Sessions.ID
	if uri == "" {
		uri = "/redfish/v1/SessionService/Sessions"
	}
	r, err := d.do(ctx, op, http.MethodPost, uri, map[string]string{"UserName": d.cred.User, "Password": d.cred.Password}, nil)
	if err != nil {
		return err
	}
	tok := r.header.Get("X-Auth-Token")
	if tok == "" {
		return &Error{Op: op, Kind: ErrBMC, Said: "session login answered without X-Auth-Token"}
	}
	d.token, d.sessionURI = tok, r.header.Get("Location")
	if i := strings.Index(d.sessionURI, "/redfish/"); i > 0 {
		d.sessionURI = d.sessionURI[i:] // an absolute Location
	}
	return nil
}

// system finds and reads the ComputerSystem (fresh each call: power
// state and ETag change).
func (d *redfishController) system(ctx context.Context, op string) (*redfishSystem, error) {
	if err := d.login(ctx, op); err != nil {
		return nil, err
	}
	uri := ""
	if d.sys != nil {
		uri = d.sys.uri
	} else {
		var root struct {
			Systems odataID `json:"Systems"`
		}
		if _, err := d.getJSON(ctx, op, "/redfish/v1/", &root); err != nil {
			return nil, err
		}
		if root.Systems.ID == "" {
			return nil, &Error{Op: op, Kind: ErrBMC, Said: "the service root has no Systems collection"}
		}
		var coll struct {
			Members []odataID `json:"Members"`
		}
		if _, err := d.getJSON(ctx, op, root.Systems.ID, &coll); err != nil {
			return nil, err
		}
		var ids []string
		for _, m := range coll.Members {
			ids = append(ids, path.Base(m.ID))
			if d.e.SystemID != "" && path.Base(m.ID) == d.e.SystemID {
				uri = m.ID
			}
		}
		switch {
		case d.e.SystemID != "" && uri == "":
			return nil, &Error{Op: op, Kind: ErrBMC, Said: fmt.Sprintf("no system %q in %s (there are: %s)", d.e.SystemID, root.Systems.ID, strings.Join(ids, ", "))}
		case d.e.SystemID == "" && len(coll.Members) != 1:
			return nil, &Error{Op: op, Kind: ErrBMC, Said: fmt.Sprintf("%d systems in %s (%s); name one: redfish://HOST/SYSTEM-ID", len(coll.Members), root.Systems.ID, strings.Join(ids, ", "))}
		case uri == "":
			uri = coll.Members[0].ID
		}
	}
	var cs struct {
		PowerState   string  `json:"PowerState"`
		VirtualMedia odataID `json:"VirtualMedia"`
		Links        struct {
			ManagedBy []odataID `json:"ManagedBy"`
		} `json:"Links"`
		Boot struct {
			Targets []string `json:"BootSourceOverrideTarget@Redfish.AllowableValues"`
			Mode    *string  `json:"BootSourceOverrideMode"`
		} `json:"Boot"`
		Actions struct {
			Reset struct {
				Target  string   `json:"target"`
				Allowed []string `json:"ResetType@Redfish.AllowableValues"`
			} `json:"#ComputerSystem.Reset"`
		} `json:"Actions"`
	}
	r, err := d.getJSON(ctx, op, uri, &cs)
	if err != nil {
		return nil, err
	}
	s := &redfishSystem{uri: uri, etag: r.header.Get("ETag"), power: cs.PowerState, resetTarget: cs.Actions.Reset.Target,
		resetTypes: cs.Actions.Reset.Allowed, targets: cs.Boot.Targets, hasMode: cs.Boot.Mode != nil, media: cs.VirtualMedia.ID}
	if len(cs.Links.ManagedBy) > 0 {
		s.managedBy = cs.Links.ManagedBy[0].ID
	}
	if s.resetTarget == "" {
		s.resetTarget = strings.TrimSuffix(uri, "/") + "/Actions/ComputerSystem.Reset"
	}
	d.sys = s
	return s, nil
}

// call runs f with the lock held and retries for transient failures. A
// session the BMC no longer knows (401 on its token: it expired, or the
// BMC restarted) is opened again, once.
func (d *redfishController) call(ctx context.Context, op string, f func(context.Context) error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	err := Retry(ctx, d.o, op, f)
	if d.token != "" && errors.Is(err, ErrAuthRefused) {
		d.o.Logger.Debug("Redfish session refused; logging in again", "bmc", d.e.String())
		d.token, d.sessionURI = "", ""
		err = Retry(ctx, d.o, op, f)
	}
	return err
}

func (d *redfishController) PowerStatus(ctx context.Context) (Power, error) {
	var p Power
	err := d.call(ctx, "power status", func(ctx context.Context) error {
		s, err := d.system(ctx, "power status")
		if err != nil {
			return err
		}
		switch s.power {
		case "On":
			p = PowerOn
		case "Off":
			p = PowerOff
		case "PoweringOn", "PoweringOff", "Paused":
			p = PowerTransition
		default:
			return &Error{Op: "power status", Kind: ErrBMC, Said: fmt.Sprintf("PowerState %q", s.power)}
		}
		return nil
	})
	return p, err
}

// reset posts ComputerSystem.Reset with resetType.
func (d *redfishController) reset(ctx context.Context, op, resetType string) error {
	s, err := d.system(ctx, op)
	if err != nil {
		return err
	}
	if len(s.resetTypes) > 0 && !slices.Contains(s.resetTypes, resetType) {
		return &Error{Op: op, Kind: ErrBMC, Said: fmt.Sprintf("ResetType %s is not offered (AllowableValues: %s)", resetType, strings.Join(s.resetTypes, ", "))}
	}
	r, err := d.do(ctx, op, http.MethodPost, s.resetTarget, map[string]string{"ResetType": resetType}, nil)
	if err != nil || r.status != http.StatusAccepted {
		return err
	}
	return d.followTask(ctx, op, r)
}

// taskPoll is how often a task monitor is asked when the BMC gives no
// Retry-After; maxTaskWait bounds the whole wait.
const (
	taskPoll    = 250 * time.Millisecond
	maxTaskWait = 2 * time.Minute
)

// followTask follows the task monitor of a 202 Accepted (DSP0266,
// "Asynchronous operations": the monitor's URI in Location; a GET of it
// answers 202 while the task runs, then the operation's own reply) until
// the task is done. A task ending in Exception, Killed or Cancelled is
// the BMC's refusal, in its words; one that runs past maxTaskWait or the
// context is an error, never taken as done.
func (d *redfishController) followTask(ctx context.Context, op string, r *redfishReply) error {
	monitor := r.header.Get("Location")
	if monitor == "" {
		var t struct {
			TaskMonitor string `json:"TaskMonitor"`
		}
		if json.Unmarshal(r.body, &t) == nil {
			monitor = t.TaskMonitor
		}
	}
	if u, err := url.Parse(monitor); err == nil && u.IsAbs() {
		monitor = u.RequestURI()
	}
	if monitor == "" {
		return &Error{Op: op, Kind: ErrBMC, Said: "the BMC accepted the request (202) but named no task monitor to follow"}
	}
	ctx, cancel := context.WithTimeout(ctx, maxTaskWait)
	defer cancel()
	for {
		wait := taskPoll
		if ra, err := strconv.Atoi(r.header.Get("Retry-After")); err == nil && ra >= 0 {
			wait = min(time.Duration(ra)*time.Second, 10*time.Second)
		}
		if err := taskState(op, r.body); err != nil {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return &Error{Op: op, Kind: ErrBMC, Said: fmt.Sprintf("the BMC's task %s did not finish: %v", monitor, ctx.Err())}
		case <-t.C:
		}
		var err error
		if r, err = d.do(ctx, op, http.MethodGet, monitor, nil, nil); err != nil {
			return err
		}
		if r.status != http.StatusAccepted {
			return taskState(op, r.body)
		}
	}
}

// taskState returns the BMC's refusal when body is a Task that failed.
func taskState(op string, body []byte) error {
	var t struct {
		TaskState string `json:"TaskState"`
		Messages  []struct {
			Message string `json:"Message"`
		} `json:"Messages"`
	}
	if json.Unmarshal(body, &t) != nil {
		return nil
	}
	switch t.TaskState {
	case "Exception", "Killed", "Cancelled", "Interrupted":
		said := "the BMC's task ended " + t.TaskState
		for _, m := range t.Messages {
			if m.Message != "" {
				said += ": " + m.Message
			}
		}
		return &Error{Op: op, Kind: ErrBMC, Said: said}
	}
	return nil
}

func (d *redfishController) PowerOn(ctx context.Context) error {
	return d.call(ctx, "power on", func(ctx context.Context) error { return d.reset(ctx, "power on", "On") })
}

func (d *redfishController) PowerOff(ctx context.Context) error {
	return d.call(ctx, "power off", func(ctx context.Context) error { return d.reset(ctx, "power off", "ForceOff") })
}

func (d *redfishController) Reset(ctx context.Context) error {
	return d.call(ctx, "reset", func(ctx context.Context) error { return d.reset(ctx, "reset", "ForceRestart") })
}

// PowerCycle uses ResetType PowerCycle when the system offers it, else
// ForceOff (when on) and On.
func (d *redfishController) PowerCycle(ctx context.Context) error {
	const op = "power cycle"
	return d.call(ctx, op, func(ctx context.Context) error {
		s, err := d.system(ctx, op)
		if err != nil {
			return err
		}
		if slices.Contains(s.resetTypes, "PowerCycle") {
			return d.reset(ctx, op, "PowerCycle")
		}
		if s.power != "Off" {
			if err := d.reset(ctx, op, "ForceOff"); err != nil {
				return err
			}
		}
		return d.reset(ctx, op, "On")
	})
}

// SetNextBootPXE PATCHes Boot with a one-time Pxe override (see
// setNextBoot).
func (d *redfishController) SetNextBootPXE(ctx context.Context, mode BootMode) error {
	return d.setNextBoot(ctx, "set next boot PXE", "Pxe", mode)
}

// setNextBoot PATCHes Boot with a one-time override to target, sending
// the ETag as If-Match when the system has one; on 412 (the system
// changed since it was read) it reads it again and retries once. A 202
// with a task monitor is followed until the task is done, as a reset's
// is. The mode is sent only where the system exposes
// BootSourceOverrideMode.
func (d *redfishController) setNextBoot(ctx context.Context, op, target string, mode BootMode) error {
	return d.call(ctx, op, func(ctx context.Context) error {
		for try := 0; ; try++ {
			s, err := d.system(ctx, op)
			if err != nil {
				return err
			}
			if len(s.targets) > 0 && !slices.Contains(s.targets, target) {
				return &Error{Op: op, Kind: ErrBMC, Said: "the system does not offer " + target + " as BootSourceOverrideTarget (AllowableValues: " + strings.Join(s.targets, ", ") + ")"}
			}
			boot := map[string]string{"BootSourceOverrideEnabled": "Once", "BootSourceOverrideTarget": target}
			if s.hasMode {
				boot["BootSourceOverrideMode"] = map[BootMode]string{BootUEFI: "UEFI", BootLegacy: "Legacy"}[mode]
			}
			var hdr map[string]string
			if s.etag != "" {
				hdr = map[string]string{"If-Match": s.etag}
			}
			r, err := d.do(ctx, op, http.MethodPatch, s.uri, map[string]any{"Boot": boot}, hdr)
			if r != nil && r.status == http.StatusPreconditionFailed && try == 0 {
				d.o.Logger.Debug("Redfish ETag changed; reading the system again", "system", s.uri)
				continue
			}
			if err == nil && r.status == http.StatusAccepted {
				return d.followTask(ctx, op, r)
			}
			return err
		}
	})
}

func (d *redfishController) Close(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sessionURI == "" {
		d.token = ""
		return nil
	}
	_, err := d.do(ctx, "log out", http.MethodDelete, d.sessionURI, nil, nil)
	d.token, d.sessionURI = "", ""
	return err
}
