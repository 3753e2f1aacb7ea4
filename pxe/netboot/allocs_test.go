package netboot

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/plasmactl/plasma-node/answer"
)

// answerAllocBudget is what serving one answer may allocate (as
// testing.AllocsPerRun counts them) with a backend that answers at once:
// reading and parsing the installer's system info, the event and the
// rendered TOML. It is a committed budget: a change that adds
// allocations to the answer path fails TestAnswerAllocBudget until this
// is raised on purpose (say why in the commit). Allocation counts are
// deterministic, unlike times.
const answerAllocBudget = 227

// answerPath is a handler whose backend answers every machine with
// testAnswer, and the system info a Proxmox VE 9.2 installer posts.
func answerPath(t testing.TB) (http.Handler, []byte) {
	t.Helper()
	si, err := os.ReadFile(filepath.Join("..", "..", "answer", "testdata", "sysinfo", "pve-9.2-synthetic.json"))
	if err != nil {
		t.Fatal(err)
	}
	a := testAnswer()
	h, err := New(Config{Backend: funcBackend(func(context.Context, *answer.SystemInfo) (*answer.Answer, error) { return a, nil }),
		BaseURL: "http://192.0.2.1:8090"})
	if err != nil {
		t.Fatal(err)
	}
	return h, si
}

// postAnswer serves one POST /answer of body on h and checks the reply.
func postAnswer(t testing.TB, h http.Handler, body []byte, rec *httptest.ResponseRecorder) {
	req := httptest.NewRequest(http.MethodPost, "/answer", bytes.NewReader(body))
	req.RemoteAddr = "192.0.2.50:40000"
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte("[global]")) {
		t.Fatalf("answer: %d %q", rec.Code, rec.Body.String())
	}
}

// TestAnswerAllocBudget holds one answer, from the system info posted to
// the TOML written, to answerAllocBudget.
func TestAnswerAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own: allocation budgets are checked without it")
	}
	h, body := answerPath(t)
	n := testing.AllocsPerRun(20, func() { postAnswer(t, h, body, httptest.NewRecorder()) })
	if n > answerAllocBudget {
		t.Errorf("an answer allocates %v times, budget %d: find the new allocations, or raise answerAllocBudget on purpose", n, answerAllocBudget)
	}
	t.Logf("an answer allocates %v times (budget %d)", n, answerAllocBudget)
}

// BenchmarkAnswer serves POST /answer with a backend that answers at
// once: the window's share of an answer.
func BenchmarkAnswer(b *testing.B) {
	h, body := answerPath(b)
	b.ReportAllocs()
	for b.Loop() {
		postAnswer(b, h, body, httptest.NewRecorder())
	}
}
