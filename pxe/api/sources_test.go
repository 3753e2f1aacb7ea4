package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/api"
)

// TestAuthFailuresAreTwoLevelInAnIPv6Slash64: each address of a /64 is
// refused after its own 3 failures, and the /64 as a whole after
// source.PrefixShare times that (24): 20 machines of one segment failing
// once each are not refused; one address is refused at its 3 while
// another of its /64 is not; then 1 000 fresh addresses of that /64 are
// all refused, while another /64 and an IPv4 address still get 401; an
// IPv4-mapped peer is its IPv4 address.
func TestAuthFailuresAreTwoLevelInAnIPv6Slash64(t *testing.T) {
	e := newEnv(t, func(c *api.Config) { c.MaxAuthFailures, c.AuthFailureWindow = 3, time.Minute })
	guess := func(remote string) int {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/window", nil)
		r.Header.Set("Authorization", "Bearer npt_guess")
		r.RemoteAddr = remote
		w := httptest.NewRecorder()
		e.h.ServeHTTP(w, r)
		return w.Code
	}
	statuses := func(from func(i int) string, n int) map[int]int {
		got := map[int]int{}
		for i := range n {
			got[guess(from(i))]++
		}
		return got
	}
	if got := statuses(func(i int) string { return fmt.Sprintf("[2001:db8:1:2::%x]:40000", i+1) }, 20); !cmp.Equal(got, map[int]int{401: 20}) {
		t.Errorf("20 addresses of one /64 failing once each: %v, want 20 × 401", got)
	}
	if got := statuses(func(int) string { return "[2001:db8:1:2::1]:40000" }, 3); !cmp.Equal(got, map[int]int{401: 2, 429: 1}) {
		t.Errorf("three more failures of an address that failed once: %v, want 2 × 401 and 1 × 429", got)
	}
	if code := guess("[2001:db8:1:2::2]:40000"); code != 401 {
		t.Errorf("another address of the /64 after one address's bound: %d, want 401", code)
	}
	if got := statuses(func(i int) string { return fmt.Sprintf("[2001:db8:1:2::1:%x]:40000", i+1) }, 1000); !cmp.Equal(got, map[int]int{429: 1000}) {
		t.Errorf("1 000 fresh addresses of a /64 with 24 failures: %v, want 1 000 × 429", got)
	}
	for _, other := range []string{"[2001:db8:1:3::1]:40000", "192.0.2.7:40000"} {
		if code := guess(other); code != 401 {
			t.Errorf("a guess from %s after the /64's: %d, want 401", other, code)
		}
	}
	for range 3 {
		guess("[::ffff:192.0.2.9]:40000")
	}
	if code := guess("192.0.2.9:40000"); code != 429 {
		t.Errorf("a guess from 192.0.2.9 after three from ::ffff:192.0.2.9: %d, want 429", code)
	}
}
