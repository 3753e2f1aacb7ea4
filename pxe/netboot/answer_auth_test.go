package netboot

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/events"
)

// TestAnswerBearerToken: with a release prepared with an answer token,
// POST /answer needs "Authorization: Bearer <name>:<secret>" (what the
// 9.2 fetch client sends: proxmox-installer-common/src/http.rs and
// proxmox-fetch-answer/src/fetch_plugins/http.rs); without it, or with
// another, 401 before the backend is asked, counted, recorded without the
// token, and never logged. Without a token configured, requests need
// none (older installers send no header).
func TestAnswerBearerToken(t *testing.T) {
	const token = "node-provisioner:0123456789abcdef"
	pve92, err := os.ReadFile("../../answer/testdata/sysinfo/pve-9.2-synthetic.json")
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		tokens     []string
		tokenErr   error
		header     string
		wantStatus int
		wantAsked  bool
	}{
		"the right bearer is served":           {tokens: []string{token}, header: "Bearer " + token, wantStatus: 200, wantAsked: true},
		"the scheme in any case":               {tokens: []string{token}, header: "bearer " + token, wantStatus: 200, wantAsked: true},
		"one of two staged releases' tokens":   {tokens: []string{"other:x", token}, header: "Bearer " + token, wantStatus: 200, wantAsked: true},
		"no header is 401":                     {tokens: []string{token}, wantStatus: 401},
		"a wrong secret is 401":                {tokens: []string{token}, header: "Bearer node-provisioner:0123456789abcdeX", wantStatus: 401},
		"a prefix of the token is 401":         {tokens: []string{token}, header: "Bearer node-provisioner:", wantStatus: 401},
		"basic auth is 401":                    {tokens: []string{token}, header: "Basic " + token, wantStatus: 401},
		"no token staged: no header is served": {wantStatus: 200, wantAsked: true},
		"tokens unreadable: refused, not open": {tokenErr: errors.New("answer token of the release is missing"), header: "Bearer " + token, wantStatus: 500},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var asked atomic.Bool
			var logs bytes.Buffer
			var got []backend.Event
			b := tokenTestBackend{funcBackend: func(context.Context, *answer.SystemInfo) (*answer.Answer, error) {
				asked.Store(true)
				return minimalAnswer(), nil
			}, events: &got}
			m := &Metrics{}
			h, err := New(Config{Backend: b, BaseURL: "http://192.0.2.1:8090", Metrics: m,
				Logger:       slog.New(slog.NewTextHandler(&logs, nil)),
				AnswerTokens: func(context.Context) ([]string, error) { return tc.tokens, tc.tokenErr }})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/answer", bytes.NewReader(pve92))
			req.Header.Set("Content-Type", "application/json")
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.wantStatus || asked.Load() != tc.wantAsked {
				t.Fatalf("status %d (want %d), backend asked %v (want %v): %s", resp.StatusCode, tc.wantStatus, asked.Load(), tc.wantAsked, body)
			}
			if strings.Contains(logs.String(), "0123456789abcdef") || strings.Contains(string(body), "0123456789abcdef") {
				t.Errorf("the token leaked:\nlog: %s\nbody: %s", logs.String(), body)
			}
			for _, e := range got {
				if strings.Contains(e.Detail, "0123456789abcdef") {
					t.Errorf("the token is in an event: %+v", e)
				}
			}
			if tc.wantStatus == 401 {
				if got := m.answersUnauthorized.Load(); got != 1 {
					t.Errorf("unauthorized counted %d times", got)
				}
				if resp.Header.Get("WWW-Authenticate") == "" {
					t.Error("a 401 without WWW-Authenticate")
				}
				if len(got) != 1 || got[0].Kind != events.Refused || got[0].Status != 401 {
					t.Errorf("events = %+v, want one refusal with 401", got)
				}
			}
		})
	}
}

// TestAnswerRefusesOtherProducts: a PBS or PMG installer posts its system
// info with product.product "pbs"/"pmg" (proxmox-installer-common's
// setup.rs ProxmoxProduct, in sysinfo.rs's body); the window answers
// Proxmox VE only: 400 naming the product, before the backend is asked,
// so nothing is consumed.
func TestAnswerRefusesOtherProducts(t *testing.T) {
	pve92, err := os.ReadFile("../../answer/testdata/sysinfo/pve-9.2-synthetic.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, product := range []string{"pbs", "pmg"} {
		t.Run(product, func(t *testing.T) {
			body := bytes.Replace(pve92, []byte(`"product":"pve"`), []byte(`"product":"`+product+`"`), 1)
			if bytes.Equal(body, pve92) {
				body = bytes.Replace(pve92, []byte(`"product": "pve"`), []byte(`"product": "`+product+`"`), 1)
			}
			if bytes.Equal(body, pve92) {
				t.Fatal("the fixture has no product to replace")
			}
			var asked atomic.Bool
			var got []backend.Event
			b := tokenTestBackend{funcBackend: func(context.Context, *answer.SystemInfo) (*answer.Answer, error) {
				asked.Store(true)
				return minimalAnswer(), nil
			}, events: &got}
			h, err := New(Config{Backend: b, BaseURL: "http://192.0.2.1:8090"})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			resp, err := http.Post(srv.URL+"/answer", "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 400 || asked.Load() || !strings.Contains(string(msg), `product "`+product+`" is not Proxmox VE`) {
				t.Errorf("status %d, backend asked %v: %s", resp.StatusCode, asked.Load(), msg)
			}
			if len(got) != 1 || !strings.Contains(got[0].Detail, `"`+product+`"`) {
				t.Errorf("events = %+v, want one naming the product", got)
			}
		})
	}
}

// tokenTestBackend is a funcBackend that keeps the events it is given.
type tokenTestBackend struct {
	funcBackend
	events *[]backend.Event
}

func (r tokenTestBackend) Record(_ context.Context, e backend.Event) error {
	*r.events = append(*r.events, e)
	return nil
}

func (r tokenTestBackend) History(context.Context) ([]backend.Event, error) { return *r.events, nil }

func minimalAnswer() *answer.Answer {
	return &answer.Answer{
		Global:    answer.Global{Keyboard: "de", Country: "at", FQDN: answer.FQDN{Name: "lab.example.com"}, Mailto: "a@example.com", Timezone: "UTC", RootPassword: "12345678"},
		Network:   answer.Network{Source: answer.NetworkFromDHCP},
		DiskSetup: answer.DiskSetup{Filesystem: answer.FilesystemExt4, DiskList: []string{"sda"}},
	}
}

// TestAnswerIsJSONWhenThe92InstallerAsks: 9.2 asks "Accept:
// application/json, application/toml;q=0.5" and parses a reply whose
// Content-Type starts with application/json as JSON, anything else as TOML
// (proxmox-fetch-answer/src/fetch_plugins/http.rs); the window answers it
// JSON (issue 36; before, TOML whatever the Accept).
func TestAnswerIsJSONWhenThe92InstallerAsks(t *testing.T) {
	pve92, err := os.ReadFile("../../answer/testdata/sysinfo/pve-9.2-synthetic.json")
	if err != nil {
		t.Fatal(err)
	}
	url := serveAnswers(t, func(context.Context, *answer.SystemInfo) (*answer.Answer, error) { return minimalAnswer(), nil })
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(pve92))
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Accept", "application/json, application/toml;q=0.5")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if _, err := answer.DecodeJSON(body, answer.Version92); err != nil {
		t.Errorf("the reply is no 9.2 answer: %v\n%s", err, body)
	}
}
