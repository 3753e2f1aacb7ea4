package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/api"
)

// TestAuthFailuresCountAnIPv6SourceByItsSlash64: guesses from 1 000
// addresses of one /64 are the failures of one source: past the bound
// every further address of that /64 gets 429, while another /64 and an
// IPv4 address still get 401; an IPv4-mapped peer is its IPv4 address.
func TestAuthFailuresCountAnIPv6SourceByItsSlash64(t *testing.T) {
	e := newEnv(t, func(c *api.Config) { c.MaxAuthFailures, c.AuthFailureWindow = 3, time.Minute })
	guess := func(remote string) int {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/window", nil)
		r.Header.Set("Authorization", "Bearer npt_guess")
		r.RemoteAddr = remote
		w := httptest.NewRecorder()
		e.h.ServeHTTP(w, r)
		return w.Code
	}
	statuses := map[int]int{}
	for i := range 1000 {
		statuses[guess(fmt.Sprintf("[2001:db8:1:2::%x]:40000", i+1))]++
	}
	if statuses[401] != 3 || statuses[429] != 997 {
		t.Errorf("guesses from 1 000 addresses of one /64: %v, want 3 × 401 and 997 × 429", statuses)
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
