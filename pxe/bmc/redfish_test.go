package bmc_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/internal/fakeredfish"
	"github.com/plasmactl/plasma-node/pxe/bmc"
)

// redfishLab serves a fake Redfish BMC over TLS and returns it with a
// driver pinned to its certificate.
func redfishLab(t *testing.T, cfg fakeredfish.Config, path, pw string, o bmc.Options) (*fakeredfish.Server, bmc.Controller) {
	t.Helper()
	if cfg.User == "" {
		cfg.User, cfg.Password = "root", "calvin-pw"
	}
	fake := fakeredfish.New(cfg)
	srv := httptest.NewTLSServer(fake)
	t.Cleanup(srv.Close)
	sum := sha256.Sum256(srv.Certificate().Raw)
	if o.Fingerprint == "" {
		o.Fingerprint = hex.EncodeToString(sum[:])
	}
	if pw == "" {
		pw = cfg.Password
	}
	e, err := bmc.Parse("redfish://" + strings.TrimPrefix(srv.URL, "https://") + path)
	if err != nil {
		t.Fatal(err)
	}
	o.Backoff = 10 * time.Millisecond
	c, err := bmc.NewRedfish(e, bmc.Credentials{User: cfg.User, Password: pw}, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return fake, c
}

func TestRedfishAgainstFake(t *testing.T) {
	for _, session := range []bool{false, true} {
		name := map[bool]string{false: "Basic", true: "Session"}[session]
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			fake, c := redfishLab(t, fakeredfish.Config{}, "", "", bmc.Options{Session: session})
			if p, err := c.PowerStatus(ctx); err != nil || p != bmc.PowerOff {
				t.Fatalf("power status %v %v; want off", p, err)
			}
			if err := c.SetNextBootPXE(ctx, bmc.BootLegacy); err != nil {
				t.Fatal(err)
			}
			en, tg, mode := fake.Override()
			if diff := cmp.Diff([]string{"Once", "Pxe", "Legacy"}, []string{en, tg, mode}); diff != "" {
				t.Errorf("override (-want +got):\n%s", diff)
			}
			if err := c.PowerOn(ctx); err != nil {
				t.Fatal(err)
			}
			if en, _, _ := fake.Override(); en != "Disabled" {
				t.Errorf("the Once override stays %s after the boot", en)
			}
			if p, _ := c.PowerStatus(ctx); p != bmc.PowerOn {
				t.Errorf("power %s after on", p)
			}
			// No PowerCycle in AllowableValues: ForceOff then On.
			if err := c.PowerCycle(ctx); err != nil {
				t.Fatal(err)
			}
			if err := c.Reset(ctx); err != nil {
				t.Fatal(err)
			}
			if err := c.PowerOff(ctx); err != nil {
				t.Fatal(err)
			}
			if p, _ := c.PowerStatus(ctx); p != bmc.PowerOff {
				t.Errorf("power %s after off", p)
			}
			c.Close(ctx)
			if session && fake.Sessions() != 0 {
				t.Errorf("%d sessions left after Close", fake.Sessions())
			}
			var resets []string
			for _, call := range fake.Calls() {
				if strings.Contains(call, "ComputerSystem.Reset") {
					resets = append(resets, call)
				}
			}
			if len(resets) != 5 {
				t.Errorf("resets %q; want on, off+on for the cycle, restart, off", resets)
			}
		})
	}
}

func TestRedfishRefusals(t *testing.T) {
	ctx := context.Background()
	t.Run("WrongPassword401", func(t *testing.T) {
		for _, session := range []bool{false, true} {
			_, c := redfishLab(t, fakeredfish.Config{}, "", "bad-password", bmc.Options{Session: session})
			_, err := c.PowerStatus(ctx)
			if !errors.Is(err, bmc.ErrAuthRefused) || !strings.Contains(err.Error(), "HTTP 401") {
				t.Errorf("session %v: %v; want ErrAuthRefused with HTTP 401", session, err)
			}
			if strings.Contains(err.Error(), "bad-password") {
				t.Errorf("the error carries the password: %v", err)
			}
		}
	})
	t.Run("SessionExpired", func(t *testing.T) {
		fake, c := redfishLab(t, fakeredfish.Config{}, "", "", bmc.Options{Session: true})
		if _, err := c.PowerStatus(ctx); err != nil {
			t.Fatal(err)
		}
		fake.ExpireSessions()
		if _, err := c.PowerStatus(ctx); err != nil {
			t.Fatalf("after the BMC forgot the session: %v", err)
		}
		logins := 0
		for _, call := range fake.Calls() {
			if call == "POST /redfish/v1/SessionService/Sessions 201" {
				logins++
			}
		}
		if logins != 2 || fake.Sessions() != 1 {
			t.Errorf("%d logins, %d sessions; want 2 and 1", logins, fake.Sessions())
		}
	})
	t.Run("ETagChangedBehind412", func(t *testing.T) {
		fake, c := redfishLab(t, fakeredfish.Config{}, "", "", bmc.Options{})
		fake.ChangeBehind()
		if err := c.SetNextBootPXE(ctx, bmc.BootUEFI); err != nil {
			t.Fatalf("after one 412 the driver reads again and retries: %v", err)
		}
		if !slices.Contains(fake.Calls(), "PATCH /redfish/v1/Systems/1 412") {
			t.Errorf("no 412 served: %q", fake.Calls())
		}
		if en, tg, mode := fake.Override(); en != "Once" || tg != "Pxe" || mode != "UEFI" {
			t.Errorf("override %s %s %s", en, tg, mode)
		}
	})
	t.Run("TransientRetried", func(t *testing.T) {
		fake, c := redfishLab(t, fakeredfish.Config{}, "", "", bmc.Options{})
		fake.Busy(2)
		if err := c.PowerOn(ctx); err != nil {
			t.Fatalf("two 503s then success: %v", err)
		}
		fake.Busy(5)
		if err := c.PowerOn(ctx); !errors.Is(err, bmc.ErrBMC) || !strings.Contains(err.Error(), "HTTP 503") {
			t.Errorf("503 three times: %v", err)
		}
	})
	t.Run("NotRetried", func(t *testing.T) {
		fake, c := redfishLab(t, fakeredfish.Config{ResetTypes: []string{"On", "ForceOff"}}, "", "", bmc.Options{})
		n := len(fake.Calls())
		if err := c.Reset(ctx); !errors.Is(err, bmc.ErrBMC) || !strings.Contains(err.Error(), "ForceRestart is not offered") {
			t.Errorf("reset without ForceRestart: %v", err)
		}
		if calls := fake.Calls()[n:]; len(calls) != 3 {
			t.Errorf("calls %q; want root, collection, system once", calls)
		}
	})
	t.Run("PinMismatch", func(t *testing.T) {
		_, c := redfishLab(t, fakeredfish.Config{}, "", "", bmc.Options{Fingerprint: strings.Repeat("ab", 32)})
		_, err := c.PowerStatus(ctx)
		if !errors.Is(err, bmc.ErrUnreachable) || !strings.Contains(err.Error(), "not the pinned") {
			t.Errorf("%v; want ErrUnreachable naming the pin", err)
		}
	})
	t.Run("SystemByID", func(t *testing.T) {
		_, c := redfishLab(t, fakeredfish.Config{SystemIDs: []string{"System.Embedded.1", "System.Embedded.2"}}, "/System.Embedded.2", "", bmc.Options{})
		if _, err := c.PowerStatus(ctx); err != nil {
			t.Error(err)
		}
		_, c = redfishLab(t, fakeredfish.Config{SystemIDs: []string{"A", "B"}}, "", "", bmc.Options{})
		if _, err := c.PowerStatus(ctx); !errors.Is(err, bmc.ErrBMC) || !strings.Contains(err.Error(), "name one") {
			t.Errorf("two systems, none named: %v", err)
		}
		_, c = redfishLab(t, fakeredfish.Config{}, "/nope", "", bmc.Options{})
		if _, err := c.PowerStatus(ctx); !errors.Is(err, bmc.ErrBMC) || !strings.Contains(err.Error(), `no system "nope"`) {
			t.Errorf("unknown system: %v", err)
		}
	})
	t.Run("Unreachable", func(t *testing.T) {
		srv := httptest.NewTLSServer(http.NotFoundHandler())
		addr := strings.TrimPrefix(srv.URL, "https://")
		srv.Close()
		e, _ := bmc.Parse("redfish://" + addr)
		c, _ := bmc.NewRedfish(e, bmc.Credentials{User: "u", Password: "p"}, bmc.Options{Backoff: time.Millisecond})
		start := time.Now()
		_, err := c.PowerStatus(ctx)
		if !errors.Is(err, bmc.ErrUnreachable) || !strings.Contains(err.Error(), "connection refused") {
			t.Errorf("%v; want ErrUnreachable", err)
		}
		t.Logf("%v (%s)", err, time.Since(start))
	})
}

// TestFakeRedfishRefuses checks the fake's own refusals on the wire: a
// test double that accepted anything would prove nothing.
func TestFakeRedfishRefuses(t *testing.T) {
	fake := fakeredfish.New(fakeredfish.Config{User: "root", Password: "pw"})
	srv := httptest.NewTLSServer(fake)
	defer srv.Close()
	hc := srv.Client()
	call := func(method, path, body, ifMatch string, auth bool) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if auth {
			req.SetBasicAuth("root", "pw")
		}
		if ifMatch != "" {
			req.Header.Set("If-Match", ifMatch)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		n, _ := resp.Body.Read(buf)
		b.Write(buf[:n])
		return resp.StatusCode, resp.Header.Get("ETag") + " " + b.String()
	}
	const sys = "/redfish/v1/Systems/1"
	tests := []struct {
		name               string
		method, path, body string
		ifMatch            string
		auth               bool
		want               int
		wantIn             string
	}{
		{"root needs no auth", "GET", "/redfish/v1/", "", "", false, 200, "Systems"},
		{"system needs auth", "GET", sys, "", "", false, 401, "InsufficientPrivilege"},
		{"system", "GET", sys, "", "", true, 200, `W/"1"`},
		{"stale ETag", "PATCH", sys, `{"Boot":{"BootSourceOverrideTarget":"Pxe"}}`, `W/"0"`, true, 412, "PreconditionFailed"},
		{"bad target", "PATCH", sys, `{"Boot":{"BootSourceOverrideTarget":"Floppy"}}`, "", true, 400, "PropertyValueNotInList"},
		{"unknown property", "PATCH", sys, `{"Boot":{"Nope":"x"}}`, "", true, 400, "PropertyUnknown"},
		{"read-only property", "PATCH", sys, `{"PowerState":"On"}`, "", true, 400, "PropertyNotWritable"},
		{"bad JSON", "PATCH", sys, `{`, "", true, 400, "MalformedJSON"},
		{"bad reset type", "POST", sys + "/Actions/ComputerSystem.Reset", `{"ResetType":"PowerCycle"}`, "", true, 400, "ActionParameterValueNotInList"},
		{"reset without type", "POST", sys + "/Actions/ComputerSystem.Reset", `{}`, "", true, 400, "ActionParameterMissing"},
		{"bad login", "POST", "/redfish/v1/SessionService/Sessions", `{"UserName":"root","Password":"x"}`, "", false, 401, "NoValidSession"},
		{"good ETag", "PATCH", sys, `{"Boot":{"BootSourceOverrideEnabled":"Once","BootSourceOverrideTarget":"Pxe"}}`, `W/"1"`, true, 204, ""},
		{"missing", "GET", "/redfish/v1/Systems/2", "", "", true, 404, "ResourceMissingAtURI"},
	}
	for _, tc := range tests {
		got, body := call(tc.method, tc.path, tc.body, tc.ifMatch, tc.auth)
		if got != tc.want || !strings.Contains(body, tc.wantIn) {
			t.Errorf("%s: %d %s; want %d with %q", tc.name, got, body, tc.want, tc.wantIn)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want bmc.Endpoint
		err  string
	}{
		{"ipmi://10.0.0.5", bmc.Endpoint{Protocol: "ipmi", Host: "10.0.0.5"}, ""},
		{"ipmi://bmc1:6230", bmc.Endpoint{Protocol: "ipmi", Host: "bmc1", Port: 6230}, ""},
		{"redfish://[fd00::5]/System.Embedded.1", bmc.Endpoint{Protocol: "redfish", Host: "fd00::5", SystemID: "System.Embedded.1"}, ""},
		{"redfish://bmc1", bmc.Endpoint{Protocol: "redfish", Host: "bmc1"}, ""},
		{"http://bmc1", bmc.Endpoint{}, `scheme "http"`},
		{"ipmi://admin:pw@bmc1", bmc.Endpoint{}, "no user or password"},
		{"ipmi://bmc1/x", bmc.Endpoint{}, "no path"},
		{"redfish://bmc1/a/b", bmc.Endpoint{}, "one path element"},
		{"ipmi://bmc1:0", bmc.Endpoint{}, "not 1 to 65535"},
		{"bmc1", bmc.Endpoint{}, "want ipmi://"},
	}
	for _, tc := range tests {
		got, err := bmc.Parse(tc.in)
		if tc.err != "" {
			if !errors.Is(err, bmc.ErrInvalidEndpoint) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q): %v; want an error with %q", tc.in, err, tc.err)
			}
			if strings.Contains(fmtErr(err), ":pw@") {
				t.Errorf("Parse(%q) error shows the password: %v", tc.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", tc.in, diff)
		}
		if back, _ := bmc.Parse(got.String()); back != got {
			t.Errorf("String() %q does not parse back", got.String())
		}
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
