package netboot

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/events"
)

// answerAllocBudget is what serving one answer may allocate (as
// testing.AllocsPerRun counts them) with a backend that answers at once:
// reading and parsing the installer's system info, the event and the
// rendered TOML. It is a committed budget: a change that adds
// allocations to the answer path fails TestAnswerAllocBudget until this
// is raised on purpose (say why in the commit). Allocation counts are
// deterministic, unlike times.
const answerAllocBudget = 229

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

// offerEventAllocBudget is what filing one proxy-DHCP offer (Handler.Net)
// from a MAC address the full timeline has never seen may allocate: the
// MAC's text, its timeline key. The timeline reuses what it forgets and
// the offer's detail is shared by the offers of one boot file and
// architecture. A committed budget, as answerAllocBudget.
const offerEventAllocBudget = 1

// TestOfferEventAllocBudget files offers of new MACs past
// timelineMaxKeys, alternating two architectures, and holds each to
// offerEventAllocBudget; their details read as before.
func TestOfferEventAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own: allocation budgets are checked without it")
	}
	tl := &Timeline{}
	h, err := New(Config{Backend: funcBackend(func(context.Context, *answer.SystemInfo) (*answer.Answer, error) { return nil, nil }),
		BaseURL: "http://192.0.2.1:8090", Timeline: tl})
	if err != nil {
		t.Fatal(err)
	}
	archs := [...]struct{ file, arch string }{{"snponly.efi", "7 (UEFI x86-64)"}, {"undionly.kpxe", "0 (BIOS x86)"}}
	mac := net.HardwareAddr{0x52, 0x54, 0, 0, 0, 0}
	i := 0
	offer := func() {
		binary.BigEndian.PutUint32(mac[2:], uint32(i))
		a := archs[i%len(archs)]
		h.Net(NetEvent{Kind: events.DHCPOffer, MAC: mac, File: a.file, Arch: a.arch})
		i++
	}
	for range 2 * timelineMaxKeys {
		offer()
	}
	n := testing.AllocsPerRun(2*timelineMaxKeys, offer)
	if n > offerEventAllocBudget {
		t.Errorf("an offer's event allocates %v times, budget %d: find the new allocation, or raise offerEventAllocBudget on purpose", n, offerEventAllocBudget)
	}
	last := archs[(i-1)%len(archs)]
	want := "dhcp-offer " + last.file + " for " + last.arch
	if got := tl.For(mac.String()); len(got) != 1 || got[0].Detail != want {
		t.Errorf("last offer's events = %+v, want one with detail %q", got, want)
	}
	t.Logf("an offer's event allocates %v times (budget %d)", n, offerEventAllocBudget)
}

// TestOfferDetailsStayBounded: a detail is the same text for the same
// offer, a new one for another, and no more than maxOfferDetails are kept.
func TestOfferDetailsStayBounded(t *testing.T) {
	var o offerDetails
	for i := range 3 * maxOfferDetails {
		arch := fmt.Sprintf("%d (arch)", i)
		if got, want := o.detail(events.DHCPOffer, "f.efi", arch), "dhcp-offer f.efi for "+arch; got != want {
			t.Fatalf("detail = %q, want %q", got, want)
		}
		if got, want := o.detail(events.DHCPAck, "f.efi", arch), "dhcp-ack f.efi for "+arch; got != want {
			t.Fatalf("detail = %q, want %q", got, want)
		}
	}
	if n := len(*o.last.Load()); n != maxOfferDetails {
		t.Errorf("details kept = %d, want %d", n, maxOfferDetails)
	}
}
