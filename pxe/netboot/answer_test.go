package netboot

import (
	"net/http/httptest"
	"sync"

	"github.com/plasmactl/plasma-node/pxe/backend"

	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/answer"
)

// funcBackend is a [backend.Backend] of a few lines, as an embedder
// writes one: it answers with f and boots nobody.
type funcBackend func(ctx context.Context, si *answer.SystemInfo) (*answer.Answer, error)

func (funcBackend) Allow(net.HardwareAddr) bool { return false }

func (funcBackend) Boot(context.Context, string) (backend.Boot, error) {
	return backend.Boot{Reason: "not booted here"}, nil
}

func (f funcBackend) Answer(ctx context.Context, req backend.AnswerRequest) (*backend.Answer, error) {
	a, err := f(ctx, req.Info)
	if err != nil {
		return nil, err
	}
	return &backend.Answer{Node: "lab", Answer: a}, nil
}

// serveAnswers serves a handler asking f on loopback and returns its
// answer URL.
func serveAnswers(t *testing.T, f funcBackend) string {
	t.Helper()
	h, err := New(Config{Backend: f, BaseURL: "http://192.0.2.1:8090"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/answer"
}

func TestAnswerWithABackendOfItsOwn(t *testing.T) {
	pve92, err := os.ReadFile("../../answer/testdata/sysinfo/pve-9.2-synthetic.json")
	if err != nil {
		t.Fatal(err)
	}
	pve82, err := os.ReadFile("../../answer/testdata/sysinfo/pve-8.2-2.json")
	if err != nil {
		t.Fatal(err)
	}
	// The answer logic: a machine is named after its DMI serial (else
	// its UUID), and only machines whose first NIC is a QEMU one are
	// answered.
	f := func(_ context.Context, si *answer.SystemInfo) (*answer.Answer, error) {
		macs := si.MACs()
		if len(macs) == 0 || !strings.HasPrefix(macs[0], "52:54:00:") {
			return nil, fmt.Errorf("%w: not a lab machine (%v)", backend.ErrNoAnswer, macs)
		}
		if si.Serial() == "boom" {
			return nil, errors.New("database password hunter2 rejected")
		}
		if si.Serial() == "down" {
			return nil, fmt.Errorf("consume registration lab: %w", storeDown{})
		}
		id := si.Serial()
		if id == "" {
			id, _, _ = strings.Cut(si.UUID(), "-")
		}
		return &answer.Answer{
			Global: answer.Global{Keyboard: "en-us", Country: "at", Timezone: "UTC", Mailto: "ops@lab.example",
				FQDN: answer.FQDN{Name: "lab-" + strings.ToLower(id) + ".lab.example"}, RootPassword: "only-for-tests"},
			Network:   answer.Network{Source: answer.NetworkFromDHCP},
			DiskSetup: answer.DiskSetup{Filesystem: answer.FilesystemExt4, DiskList: []string{"sda"}},
		}, nil
	}
	url := serveAnswers(t, f)
	tests := map[string]struct {
		method, body, ctype string
		status              int
		contains            string
	}{
		"a 9.2 installer gets kebab-case TOML":        {"POST", string(pve92), "application/json", 200, "root-password = 'only-for-tests'"},
		"the answer is the backend's":                 {"POST", string(pve92), "application/json", 200, "fqdn = 'lab-"},
		"an 8.2 installer gets snake_case TOML":       {"POST", strings.Replace(string(pve82), `"mac"`, `"mac":"52:54:00:00:00:09","x"`, 1), "application/json", 200, "root_password = 'only-for-tests'"},
		"a machine the func refuses gets 404 and why": {"POST", `{"iso":{"release":"9.2"},"network_interfaces":[{"link":"e","mac":"aa:00:00:00:00:01"}]}`, "application/json", 404, "not a lab machine"},
		"a func failure is 500 without its message":   {"POST", `{"iso":{"release":"9.2"},"dmi":{"system":{"serial":"boom"}},"network_interfaces":[{"link":"e","mac":"52:54:00:00:00:01"}]}`, "application/json", 500, "answer failed; see the server log"},
		"a store that cannot be reached is 503":       {"POST", `{"iso":{"release":"9.2"},"dmi":{"system":{"serial":"down"}},"network_interfaces":[{"link":"e","mac":"52:54:00:00:00:01"}]}`, "application/json", 503, "the store is unavailable; try again"},
		"a body that is not JSON is 400":              {"POST", "hello", "application/json", 400, "invalid system-info JSON"},
		"an installer too old is 400":                 {"POST", `{"iso":{"release":"7.4"}}`, "application/json", 400, "installer version 7.4 is not supported"},
		"a GET is 405":                                {"GET", "", "", 405, "POST the system info"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, url, strings.NewReader(tc.body))
			if tc.ctype != "" {
				req.Header.Set("Content-Type", tc.ctype)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.contains) || strings.Contains(string(b), "hunter2") {
				t.Errorf("%s: %d %q, want %d containing %q", tc.method, resp.StatusCode, b, tc.status, tc.contains)
			}
			if tc.status == 200 && resp.Header.Get("Content-Type") != ContentTypeTOML {
				t.Errorf("content type %q", resp.Header.Get("Content-Type"))
			}
		})
	}
}

// TestRefusedBodiesAreLoggedBounded: a body of the most MACs taken
// (answer.MaxInterfaces, over 1 KiB of them) or with a 1 MB serial adds no
// more than maxEventField per field to the event, the log line and the
// timeline.
func TestRefusedBodiesAreLoggedBounded(t *testing.T) {
	var recorded []backend.Event
	rec := &recordingBackend{funcBackend: func(context.Context, *answer.SystemInfo) (*answer.Answer, error) {
		return nil, backend.ErrNoAnswer
	}, events: &recorded}
	h, err := New(Config{Backend: rec, BaseURL: "http://192.0.2.1:8090"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	var macs []string
	for i := range answer.MaxInterfaces {
		macs = append(macs, fmt.Sprintf(`{"link":"e%d","mac":"52:54:%02x:%02x:%02x:01"}`, i, i>>16&0xff, i>>8&0xff, i&0xff))
	}
	for _, body := range []string{
		`{"iso":{"release":"9.2"},"network_interfaces":[` + strings.Join(macs, ",") + `]}`,
		`{"iso":{"release":"9.2"},"dmi":{"system":{"serial":"` + strings.Repeat("S", 900_000) + `"}}}`,
	} {
		resp, err := http.Post(srv.URL+"/answer", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Fatalf("status %d, want 404", resp.StatusCode)
		}
	}
	if len(recorded) != 2 {
		t.Fatalf("recorded %d events, want 2", len(recorded))
	}
	for _, e := range recorded {
		for _, f := range []string{e.MAC, e.Serial, e.Detail} {
			if len(f) > maxEventField+40 {
				t.Errorf("an event field is %d bytes long", len(f))
			}
		}
	}
	if !strings.Contains(recorded[0].MAC, "bytes more)") || !strings.Contains(recorded[1].Serial, "bytes more)") {
		t.Errorf("a clipped field does not say what was dropped: %q / %q", recorded[0].MAC[len(recorded[0].MAC)-30:], recorded[1].Serial[len(recorded[1].Serial)-30:])
	}
}

// recordingBackend is a funcBackend that keeps what it is told.
type recordingBackend struct {
	funcBackend
	mu     sync.Mutex
	events *[]backend.Event
}

func (r *recordingBackend) Record(_ context.Context, e backend.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.events = append(*r.events, e)
	return nil
}

func (r *recordingBackend) History(context.Context) ([]backend.Event, error) { return nil, nil }

// TestAnswerEndpointResistsSpraying: a body listing more than
// answer.MaxInterfaces interfaces is refused with 400 saying so, before
// any registration is tried; an address refused again and again waits
// longer and longer before its request is looked at, its replies
// unchanged (404), until an answer served to it forgets its refusals; a
// machine posting the same body again is never slowed.
func TestAnswerEndpointResistsSpraying(t *testing.T) {
	const pinned = "52:54:00:aa:00:01"
	var asked int
	var mu sync.Mutex
	b := funcBackend(func(_ context.Context, si *answer.SystemInfo) (*answer.Answer, error) {
		mu.Lock()
		asked++
		mu.Unlock()
		if slices.Contains(si.MACs(), pinned) {
			return testAnswer(), nil
		}
		return nil, backend.ErrNoAnswer
	})
	h, err := New(Config{Backend: b, BaseURL: "http://192.0.2.1:8090", MaxRefusalDelay: 800 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	body := func(macs ...string) string {
		var ifs []string
		for i, m := range macs {
			ifs = append(ifs, fmt.Sprintf(`{"link":"e%d","mac":"%s"}`, i, m))
		}
		return `{"iso":{"release":"9.2"},"product":{"product":"pve"},"network_interfaces":[` + strings.Join(ifs, ",") + `]}`
	}
	post := func(b string) (int, string, time.Duration) {
		start := time.Now()
		resp, err := http.Post(srv.URL+"/answer", "application/json", strings.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		msg, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(msg), time.Since(start)
	}
	var spray []string
	for i := range answer.MaxInterfaces + 1 {
		spray = append(spray, fmt.Sprintf("52:54:01:00:%02x:%02x", i>>8, i&0xff))
	}
	spray[answer.MaxInterfaces] = pinned
	if code, msg, _ := post(body(spray...)); code != 400 || !strings.Contains(msg, fmt.Sprintf("over %d network interfaces", answer.MaxInterfaces)) || asked != 0 {
		t.Fatalf("a body of %d interfaces: %d %q (backend asked %d times), want 400 saying so, unasked", len(spray), code, msg, asked)
	}
	var waits []time.Duration
	for i := range 9 {
		code, _, took := post(body(fmt.Sprintf("52:54:02:00:00:%02x", i)))
		if code != 404 {
			t.Fatalf("made-up MAC %d: %d, want 404 as always", i, code)
		}
		waits = append(waits, took)
	}
	// Misses 1-5 are free (the oversized body is no guess); the later
	// ones wait 250 ms, 500 ms, then the bound.
	if waits[3] > 200*time.Millisecond || waits[6] < 250*time.Millisecond || waits[8] < 750*time.Millisecond || waits[8] > 3*time.Second {
		t.Errorf("waits of the refused requests: %v; want none at first, then growing to the 800 ms bound", waits)
	}
	if code, _, _ := post(body(pinned)); code != 200 {
		t.Fatalf("the real machine after the spray: %d, want 200 (slowed, never refused)", code)
	}
	if _, _, took := post(body("52:54:02:00:00:ff")); took > 200*time.Millisecond {
		t.Errorf("a request after an answer served waited %s: the refusals were not forgotten", took)
	}
	// A machine retrying its own system info is one guess, never slowed.
	for i := range 2 * refusalsFree {
		if code, _, took := post(body("52:54:03:00:00:01")); code != 404 || took > 200*time.Millisecond {
			t.Errorf("retry %d of the same body: %d after %s, want 404 at once", i, code, took)
		}
	}
}

// testAnswer is a valid answer of a lab machine.
func testAnswer() *answer.Answer {
	return &answer.Answer{
		Global: answer.Global{Keyboard: "en-us", Country: "at", Timezone: "UTC", Mailto: "ops@lab.example",
			FQDN: answer.FQDN{Name: "lab-1.lab.example"}, RootPassword: "only-for-tests"},
		Network:   answer.Network{Source: answer.NetworkFromDHCP},
		DiskSetup: answer.DiskSetup{Filesystem: answer.FilesystemExt4, DiskList: []string{"sda"}},
	}
}

// storeDown is a store's error for a database it cannot reach, as
// pxe/store/postgres's UnavailableError says so: by its Unavailable method.
type storeDown struct{}

func (storeDown) Error() string     { return "PostgreSQL store postgres://np:xxxxx@db/np is unavailable" }
func (storeDown) Unavailable() bool { return true }
