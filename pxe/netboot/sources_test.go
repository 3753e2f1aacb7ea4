package netboot

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/internal/source"

	"context"

	"github.com/plasmactl/plasma-node/answer"
)

// TestAnswerRefusalsCountAnIPv6SourceByItsSlash64: 1 000 addresses of
// one /64, each posting made-up MACs, are counted as one source: the
// /64 is slowed as one address would be and takes one place among the
// sources tracked; another /64 and an IPv4 address are sources of their
// own, not slowed; an IPv4-mapped peer is its IPv4 address.
func TestAnswerRefusalsCountAnIPv6SourceByItsSlash64(t *testing.T) {
	none := funcBackend(func(context.Context, *answer.SystemInfo) (*answer.Answer, error) { return nil, backend.ErrNoAnswer })
	h, err := New(Config{Backend: none, BaseURL: "http://[2001:db8::2]:8090", MaxRefusalDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	post := func(remote string, i int) {
		body := fmt.Sprintf(`{"iso":{"release":"9.2"},"product":{"product":"pve"},"network_interfaces":[{"link":"e0","mac":"52:54:04:00:%02x:%02x"}]}`, i>>8, i&0xff)
		r := httptest.NewRequest(http.MethodPost, "/answer", strings.NewReader(body))
		r.RemoteAddr = remote
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusNotFound {
			t.Fatalf("made-up MAC %d from %s: %d, want 404", i, remote, w.Code)
		}
	}
	for i := range 1000 {
		post(fmt.Sprintf("[2001:db8:1:2::%x]:40000", i+1), i)
	}
	now := time.Now()
	if n := len(h.refusals.seen); n != 1 {
		t.Errorf("1 000 addresses of one /64 are tracked as %d sources, want 1", n)
	}
	if d := h.refusals.delay(key("[2001:db8:1:2:ffff::1]:1"), now); d == 0 {
		t.Error("a fresh address of the flooding /64 is not slowed")
	}
	for _, other := range []string{"[2001:db8:1:3::1]:1", "192.0.2.7:1"} {
		if d := h.refusals.delay(key(other), now); d != 0 {
			t.Errorf("%s is slowed %s for the /64's refusals", other, d)
		}
	}
	for i := range refusalsFree + 1 {
		post("[::ffff:192.0.2.9]:40000", 2000+i)
	}
	if d := h.refusals.delay(key("192.0.2.9:1"), now); d == 0 {
		t.Error("the refusals of an IPv4-mapped peer do not count for its IPv4 address")
	}
}

// key is the source of a peer's address.
func key(remote string) netip.Prefix {
	p, _ := source.OfRemote(remote)
	return p
}
