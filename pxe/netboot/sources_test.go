package netboot

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/internal/source"

	"context"

	"github.com/plasmactl/plasma-node/answer"
)

// TestAnswerRefusalsAreTwoLevelInAnIPv6Slash64: each address of a /64
// is a client whose refusals slow it alone, and the /64 as a whole is
// slowed at source.PrefixShare times that: 20 machines of one segment,
// each refused once (booted before they were registered), slow none of
// them; one address guessing past the free refusals is slowed while
// another address of its /64 is not; 1 000 addresses of one /64, each
// posting one made-up MAC, slow a fresh address of that /64, and the
// /64 keeps its count however many addresses were tracked; another /64
// and an IPv4 address are not slowed; an IPv4-mapped peer is its IPv4
// address.
func TestAnswerRefusalsAreTwoLevelInAnIPv6Slash64(t *testing.T) {
	none := funcBackend(func(context.Context, *answer.SystemInfo) (*answer.Answer, error) { return nil, backend.ErrNoAnswer })
	h, err := New(Config{Backend: none, BaseURL: "http://[2001:db8::2]:8090", MaxRefusalDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	guess := 0
	post := func(remote string) {
		guess++
		body := fmt.Sprintf(`{"iso":{"release":"9.2"},"product":{"product":"pve"},"network_interfaces":[{"link":"e0","mac":"52:54:04:%02x:%02x:%02x"}]}`, guess>>16, (guess>>8)&0xff, guess&0xff)
		r := httptest.NewRequest(http.MethodPost, "/answer", strings.NewReader(body))
		r.RemoteAddr = remote
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusNotFound {
			t.Fatalf("made-up MAC %d from %s: %d, want 404", guess, remote, w.Code)
		}
	}
	slowed := func(remote string) bool { return h.refusals.delay(source.AddrOfRemote(remote), time.Now()) > 0 }
	for i := range 20 {
		post(fmt.Sprintf("[2001:db8:1:2::%x]:40000", i+1))
	}
	for _, a := range []string{"[2001:db8:1:2::1]:1", "[2001:db8:1:2::14]:1", "[2001:db8:1:2::ffff]:1"} {
		if slowed(a) {
			t.Errorf("%s is slowed after 20 machines of its /64 were refused once each", a)
		}
	}
	for range refusalsFree {
		post("[2001:db8:1:2::1]:40000")
	}
	if !slowed("[2001:db8:1:2::1]:1") {
		t.Error("an address refused past the free refusals is not slowed")
	}
	if slowed("[2001:db8:1:2::2]:1") {
		t.Error("another address of its /64 is slowed for one address's refusals")
	}
	for i := range 1000 {
		post(fmt.Sprintf("[2001:db8:1:2::1:%x]:40000", i+1))
	}
	if !slowed("[2001:db8:1:2:ffff::1]:1") {
		t.Error("a fresh address of a /64 whose 1 000 addresses were refused is not slowed")
	}
	for i := range refusalSources {
		post(fmt.Sprintf("[2001:db8:1:2::2:%x]:40000", i+1))
	}
	if !slowed("[2001:db8:1:2:ffff::2]:1") {
		t.Errorf("after %d more addresses of the /64 were refused, a fresh one is not slowed: the /64's count was pushed out", refusalSources)
	}
	for _, other := range []string{"[2001:db8:1:3::1]:1", "192.0.2.7:1"} {
		if slowed(other) {
			t.Errorf("%s is slowed for the /64's refusals", other)
		}
	}
	for range refusalsFree + 1 {
		post("[::ffff:192.0.2.9]:40000")
	}
	if !slowed("192.0.2.9:1") {
		t.Error("the refusals of an IPv4-mapped peer do not count for its IPv4 address")
	}
}
