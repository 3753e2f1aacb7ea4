package netboot

import (
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var (
	commentRE = regexp.MustCompile(`^# (HELP [a-zA-Z_:][a-zA-Z0-9_:]* .+|TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge|untyped))$`)
	sampleRE  = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-zA-Z_][a-zA-Z0-9_]*="[^"\\\n]*"(,[a-zA-Z_][a-zA-Z0-9_]*="[^"\\\n]*")*\})? (\S+)$`)
)

// parseMetrics checks every line of Prometheus text and returns the
// samples by name and labels.
func parseMetrics(t *testing.T, text string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	typed := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if strings.HasPrefix(l, "#") {
			if !commentRE.MatchString(l) {
				t.Errorf("bad comment line %q", l)
			}
			if f := strings.Fields(l); f[1] == "TYPE" {
				typed[f[2]] = true
			}
			continue
		}
		m := sampleRE.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("bad sample line %q", l)
			continue
		}
		if !typed[m[1]] {
			t.Errorf("sample %q comes before its # TYPE", l)
		}
		v, err := strconv.ParseFloat(m[4], 64)
		if err != nil {
			t.Errorf("bad value in %q: %v", l, err)
		}
		out[m[1]+m[2]] = v
	}
	return out
}

func TestMetricsTextParses(t *testing.T) {
	m := &Metrics{now: func() time.Time { return time.Unix(1000, 0) }}
	m.dhcpOffer()
	m.dhcpOffer()
	m.DHCPIgnored()
	m.tftpTransfer(1024)
	m.tftpRefused()
	m.scriptServed(true)
	m.scriptServed(false)
	m.assetSent(4096)
	m.answerServed()
	m.answerRefused()
	m.answerRefused()
	m.answerUnauthorized()
	m.BootEventDropped()
	m.SetWindow(true, time.Unix(1000, 0).Add(90*time.Minute+500*time.Millisecond))
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); ct != contentTypeMetrics {
		t.Errorf("Content-Type = %q, want %q", ct, contentTypeMetrics)
	}
	got := parseMetrics(t, rec.Body.String())
	want := map[string]float64{
		"plasma_pxe_dhcp_offers_total":                      2,
		"plasma_pxe_dhcp_ignored_total":                     1,
		"plasma_pxe_tftp_transfers_total":                   1,
		"plasma_pxe_tftp_bytes_total":                       1024,
		"plasma_pxe_tftp_refused_total":                     1,
		`plasma_pxe_scripts_served_total{result="install"}`: 1,
		`plasma_pxe_scripts_served_total{result="exit"}`:    1,
		`plasma_pxe_scripts_served_total{result="rechain"}`: 0,
		"plasma_pxe_asset_requests_total":                   1,
		"plasma_pxe_asset_bytes_total":                      4096,
		"plasma_pxe_answers_served_total":                   1,
		"plasma_pxe_answers_refused_total":                  2,
		"plasma_pxe_answers_unauthorized_total":             1,
		"plasma_pxe_boot_events_dropped_total":              1,
		"plasma_pxe_window_open":                            1,
		"plasma_pxe_window_seconds_left":                    5400.5,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
}

func TestMetricsWindowGauges(t *testing.T) {
	tests := map[string]struct {
		open     bool
		deadline time.Time
		wantLeft float64
	}{
		"an open window without limit has +Inf left": {true, time.Time{}, math.Inf(1)},
		"a closed window has nothing left":           {false, time.Unix(5000, 0), 0},
		"a window past its deadline has 0 left":      {true, time.Unix(10, 0), 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := &Metrics{now: func() time.Time { return time.Unix(1000, 0) }}
			m.SetWindow(tc.open, tc.deadline)
			var b strings.Builder
			if _, err := m.WriteTo(&b); err != nil {
				t.Fatal(err)
			}
			got := parseMetrics(t, b.String())
			if v := got["plasma_pxe_window_seconds_left"]; v != tc.wantLeft {
				t.Errorf("seconds left = %v, want %v", v, tc.wantLeft)
			}
		})
	}
}

func TestBootHandlerServesMetrics(t *testing.T) {
	e := newBootEnv(t, Config{}, testReg(t, "pve1", "sda", testMAC1))
	e.get(t, "/boot.ipxe?mac="+testMAC1)
	code, body, _ := e.get(t, "/metrics")
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	if got := parseMetrics(t, body)[`plasma_pxe_scripts_served_total{result="install"}`]; got != 1 {
		t.Errorf("install scripts = %v, want 1", got)
	}
}
