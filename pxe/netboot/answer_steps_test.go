package netboot

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/backend"
)

// countRenders makes h count its renders of answers.
func countRenders(h *Handler) *atomic.Int64 {
	var n atomic.Int64
	render := h.render
	h.render = func(a *answer.Answer, v answer.Version, o answer.RenderOptions) ([]byte, error) {
		n.Add(1)
		return render(a, v, o)
	}
	return &n
}

// TestAnAnswerIsRenderedOncePerRequest: through node-provisioner's own
// backend over a state folder, the answer of a registration is rendered
// once for the request that gets it, and not at all for the repeat that
// is refused because the registration was consumed.
func TestAnAnswerIsRenderedOncePerRequest(t *testing.T) {
	e := newBootEnv(t, Config{}, testReg(t, "pve1", "sda", testMAC1))
	renders := countRenders(e.h)
	body := `{"iso":{"release":"9.2"},"product":{"product":"pve"},"network_interfaces":[{"link":"e0","mac":"` + testMAC1 + `"}]}`
	post := func() (int, string) {
		resp, err := http.Post(e.srv.URL+"/answer", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, got := post(); code != http.StatusOK || !strings.Contains(got, "pve1") {
		t.Fatalf("the first request: %d %q, want 200 and pve1's answer", code, got)
	}
	if n := renders.Load(); n != 1 {
		t.Errorf("renders after one answer = %d, want 1", n)
	}
	if code, _ := post(); code != http.StatusNotFound {
		t.Errorf("the repeat: %d, want 404 (consumed)", code)
	}
	if n := renders.Load(); n != 1 {
		// The repeat matches no pending registration: it is refused
		// before anything is built or rendered.
		t.Errorf("renders after the refused repeat = %d, want still 1", n)
	}
	consumed, err := e.reg.Consumed(context.Background())
	if err != nil || len(consumed) != 1 || consumed[0].Name != "pve1" {
		t.Errorf("consumed = %v, %v; want pve1 once", consumed, err)
	}
}

// stepBackend answers every machine with a fixed answer and records the
// steps the window takes of it.
type stepBackend struct {
	claim error
	steps *[]string
}

func (stepBackend) Allow(net.HardwareAddr) bool { return false }

func (stepBackend) Boot(context.Context, string) (backend.Boot, error) { return backend.Boot{}, nil }

func (s stepBackend) Answer(_ context.Context, _ backend.AnswerRequest) (*backend.Answer, error) {
	*s.steps = append(*s.steps, "answer")
	return &backend.Answer{Node: "lab", Answer: testAnswer(),
		Claim: func(context.Context) error {
			*s.steps = append(*s.steps, "claim")
			return s.claim
		},
		Delivered: func(err error) {
			step := "delivered"
			if err != nil {
				step = "not delivered: " + err.Error()
			}
			*s.steps = append(*s.steps, step)
		}}, nil
}

// TestTheWindowTakesTheSeamsSteps: the window asks, renders, claims only
// a rendered answer, writes it only once claimed, and reports it
// delivered or not, whatever happened.
func TestTheWindowTakesTheSeamsSteps(t *testing.T) {
	pve92, err := os.ReadFile("../../answer/testdata/sysinfo/pve-9.2-synthetic.json")
	if err != nil {
		t.Fatal(err)
	}
	errDown := errors.New("the store is down")
	tests := map[string]struct {
		claim      error
		failRender bool
		wantCode   int
		wantSteps  []string
	}{
		"an answer claimed is written and delivered": {wantCode: 200, wantSteps: []string{"answer", "claim", "delivered"}},
		"a claim refused writes nothing": {claim: &backend.Refusal{Status: 404, Reason: "no pending registration matches this machine"}, wantCode: 404,
			wantSteps: []string{"answer", "claim", "not delivered: no pending registration matches this machine"}},
		"a claim that fails is a 500":                     {claim: errDown, wantCode: 500, wantSteps: []string{"answer", "claim", "not delivered: the store is down"}},
		"an answer that does not render is never claimed": {failRender: true, wantCode: 500, wantSteps: []string{"answer", "not delivered: render: broken"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var steps []string
			h, err := New(Config{Backend: stepBackend{claim: tc.claim, steps: &steps}, BaseURL: "http://192.0.2.1:8090"})
			if err != nil {
				t.Fatal(err)
			}
			if tc.failRender {
				h.render = func(*answer.Answer, answer.Version, answer.RenderOptions) ([]byte, error) {
					return nil, errors.New("render: broken")
				}
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			resp, err := http.Post(srv.URL+"/answer", "application/json", strings.NewReader(string(pve92)))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.wantCode {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.wantCode)
			}
			if tc.wantCode != 200 && strings.Contains(string(body), "[global]") {
				t.Errorf("a refused request got an answer: %q", body)
			}
			if diff := cmp.Diff(tc.wantSteps, steps); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
		})
	}
}
