package netboot

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// contentTypeMetrics is the type of the GET /metrics reply: Prometheus'
// text exposition format 0.0.4.
const contentTypeMetrics = "text/plain; version=0.0.4; charset=utf-8"

// Metrics counts what a provisioning window did, for GET /metrics. The
// DHCP, TFTP, HTTP and answer parts each call its small hooks; every hook
// is safe for concurrent use and does nothing on a nil *Metrics, so a part
// without metrics passes nil. The zero value is ready.
type Metrics struct {
	dhcpOffers, dhcpIgnored            atomic.Int64
	tftpTransfers, tftpBytes, tftpRefs atomic.Int64
	scriptsInstall, scriptsExit        atomic.Int64
	scriptsRechain                     atomic.Int64
	assetRequests, assetBytes          atomic.Int64
	answersServed, answersRefused      atomic.Int64
	answersUnauthorized                atomic.Int64
	eventsDropped                      atomic.Int64
	windowOpen                         atomic.Bool
	enrolMu                            sync.Mutex
	enrolments                         map[[2]string]int64 // {rule, outcome}
	windowDeadline                     atomic.Int64        // Unix nanoseconds; 0: no limit
	now                                func() time.Time
}

// enrolment counts a discovered machine's enrolment by rule and
// outcome ([Enrolment]).
func (m *Metrics) enrolment(rule, outcome string) {
	if m == nil {
		return
	}
	m.enrolMu.Lock()
	defer m.enrolMu.Unlock()
	if m.enrolments == nil {
		m.enrolments = map[[2]string]int64{}
	}
	m.enrolments[[2]string{rule, outcome}]++
}

// enrolmentSamples returns the enrolment counts, by rule and outcome.
func (m *Metrics) enrolmentSamples() []sample {
	m.enrolMu.Lock()
	defer m.enrolMu.Unlock()
	keys := slices.SortedFunc(maps.Keys(m.enrolments), func(a, b [2]string) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
	out := make([]sample, 0, len(keys))
	for _, k := range keys {
		out = append(out, sample{fmt.Sprintf(`{rule=%q,outcome=%q}`, k[0], k[1]), float64(m.enrolments[k])})
	}
	return out
}

// dhcpOffer counts a proxy-DHCP offer or acknowledgement sent.
func (m *Metrics) dhcpOffer() {
	if m != nil {
		m.dhcpOffers.Add(1)
	}
}

// DHCPIgnored counts a DHCP request the window did not answer (not a PXE
// client, or a machine it does not serve).
func (m *Metrics) DHCPIgnored() {
	if m != nil {
		m.dhcpIgnored.Add(1)
	}
}

// tftpTransfer counts a finished TFTP transfer of n bytes.
func (m *Metrics) tftpTransfer(n int64) {
	if m != nil {
		m.tftpTransfers.Add(1)
		m.tftpBytes.Add(n)
	}
}

// tftpRefused counts a refused TFTP request (write, traversal, missing
// file).
func (m *Metrics) tftpRefused() {
	if m != nil {
		m.tftpRefs.Add(1)
	}
}

// scriptServed counts an iPXE script served: install is true for an
// installer script and false for one that exits to the next boot device.
func (m *Metrics) scriptServed(install bool) {
	if m == nil {
		return
	}
	if install {
		m.scriptsInstall.Add(1)
	} else {
		m.scriptsExit.Add(1)
	}
}

func (m *Metrics) scriptRechain() {
	if m != nil {
		m.scriptsRechain.Add(1)
	}
}

// assetSent counts a request for a boot asset and the n bytes sent.
func (m *Metrics) assetSent(n int64) {
	if m != nil {
		m.assetRequests.Add(1)
		m.assetBytes.Add(n)
	}
}

// answerServed counts an answer file served.
func (m *Metrics) answerServed() {
	if m != nil {
		m.answersServed.Add(1)
	}
}

// answerRefused counts a request for an answer that got none.
func (m *Metrics) answerRefused() {
	if m != nil {
		m.answersRefused.Add(1)
	}
}

// answerUnauthorized counts an answer request refused for a missing or
// wrong bearer token (it is counted as refused too).
func (m *Metrics) answerUnauthorized() {
	if m != nil {
		m.answersUnauthorized.Add(1)
	}
}

// BootEventDropped counts a boot step (a proxy-DHCP or TFTP event) the
// window did not record in its event log because the log's writer was
// behind (a boot storm): the step was served, and is on the timeline.
func (m *Metrics) BootEventDropped() {
	if m != nil {
		m.eventsDropped.Add(1)
	}
}

// SetWindow records whether the provisioning window is open and when it
// closes (the zero time: no limit), for the window gauges and the status
// page. The caller running the window (package pxe's Server) sets it
// when the window opens and closes.
func (m *Metrics) SetWindow(open bool, deadline time.Time) {
	if m == nil {
		return
	}
	var d int64
	if !deadline.IsZero() {
		d = deadline.UnixNano()
	}
	m.windowDeadline.Store(d)
	m.windowOpen.Store(open)
}

// Window reports what [Metrics.SetWindow] last recorded and how long the
// window has left: 0 when closed, math.MaxInt64 when open without a limit
// (GET /metrics shows +Inf).
func (m *Metrics) Window() (open bool, deadline time.Time, left time.Duration) {
	if m == nil {
		return false, time.Time{}, 0
	}
	open = m.windowOpen.Load()
	d := m.windowDeadline.Load()
	if d != 0 {
		deadline = time.Unix(0, d)
	}
	switch {
	case !open:
		left = 0
	case d == 0:
		left = time.Duration(math.MaxInt64)
	default:
		now := time.Now
		if m.now != nil {
			now = m.now
		}
		left = max(0, deadline.Sub(now()))
	}
	return open, deadline, left
}

type metric struct {
	name, help, kind string
	samples          []sample
}

type sample struct {
	labels string // `{k="v"}` or empty
	value  float64
}

func (m *Metrics) metrics() []metric {
	c := func(v *atomic.Int64) []sample { return []sample{{"", float64(v.Load())}} }
	open, _, left := m.Window()
	openV, leftV := 0.0, left.Seconds()
	if open {
		openV = 1
	}
	if left == time.Duration(math.MaxInt64) {
		leftV = math.Inf(1)
	}
	return []metric{
		{"plasma_pxe_dhcp_offers_total", "Proxy-DHCP offers and acknowledgements sent.", "counter", c(&m.dhcpOffers)},
		{"plasma_pxe_dhcp_ignored_total", "DHCP requests not answered (not PXE, or a machine not served).", "counter", c(&m.dhcpIgnored)},
		{"plasma_pxe_tftp_transfers_total", "TFTP transfers finished.", "counter", c(&m.tftpTransfers)},
		{"plasma_pxe_tftp_bytes_total", "Bytes sent by TFTP.", "counter", c(&m.tftpBytes)},
		{"plasma_pxe_tftp_refused_total", "TFTP requests refused.", "counter", c(&m.tftpRefs)},
		{"plasma_pxe_scripts_served_total", "iPXE scripts served, by result.", "counter", []sample{
			{`{result="install"}`, float64(m.scriptsInstall.Load())},
			{`{result="exit"}`, float64(m.scriptsExit.Load())},
			{`{result="rechain"}`, float64(m.scriptsRechain.Load())},
		}},
		{"plasma_pxe_asset_requests_total", "Boot asset requests answered.", "counter", c(&m.assetRequests)},
		{"plasma_pxe_asset_bytes_total", "Bytes of boot assets sent.", "counter", c(&m.assetBytes)},
		{"plasma_pxe_answers_served_total", "Answer files served.", "counter", c(&m.answersServed)},
		{"plasma_pxe_answers_refused_total", "Answer requests refused.", "counter", c(&m.answersRefused)},
		{"plasma_pxe_answers_unauthorized_total", "Answer requests refused for a missing or wrong bearer token.", "counter", c(&m.answersUnauthorized)},
		{"plasma_pxe_boot_events_dropped_total", "Boot steps (proxy-DHCP, TFTP) served but not recorded in the event log, its writer being behind.", "counter", c(&m.eventsDropped)},
		{"plasma_pxe_enrolments_total", "Discovered machines by enrolment rule and outcome (enrolled, refused, no_rule).", "counter", m.enrolmentSamples()},
		{"plasma_pxe_window_open", "1 while the provisioning window is open.", "gauge", []sample{{"", openV}}},
		{"plasma_pxe_window_seconds_left", "Seconds until the provisioning window closes (+Inf: no limit).", "gauge", []sample{{"", leftV}}},
	}
}

// WriteTo writes the metrics to w in Prometheus' text format.
func (m *Metrics) WriteTo(w io.Writer) (int64, error) {
	if m == nil {
		m = &Metrics{}
	}
	cw := &byteCounter{w: w}
	bw := bufio.NewWriter(cw)
	for _, mt := range m.metrics() {
		fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s %s\n", mt.name, mt.help, mt.name, mt.kind)
		for _, s := range mt.samples {
			fmt.Fprintf(bw, "%s%s %s\n", mt.name, s.labels, formatValue(s.value))
		}
	}
	if err := bw.Flush(); err != nil {
		return cw.n, fmt.Errorf("write metrics: %w", err)
	}
	return cw.n, nil
}

type byteCounter struct {
	w io.Writer
	n int64
}

func (b *byteCounter) Write(p []byte) (int, error) {
	n, err := b.w.Write(p)
	b.n += int64(n)
	return n, err
}

func formatValue(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if strings.Contains(s, ".") {
		s = strconv.FormatFloat(v, 'f', 3, 64)
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// ServeHTTP answers GET /metrics.
func (m *Metrics) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", contentTypeMetrics)
	w.Header().Set("Cache-Control", "no-store")
	m.WriteTo(w)
}

// countingWriter records the status and counts the body bytes written.
type countingWriter struct {
	http.ResponseWriter
	status int
	n      int64
}

func (c *countingWriter) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *countingWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	n, err := c.ResponseWriter.Write(b)
	c.n += int64(n)
	return n, err
}

// ReadFrom keeps the underlying writer's sendfile path for big assets.
func (c *countingWriter) ReadFrom(r io.Reader) (int64, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	rf, ok := c.ResponseWriter.(io.ReaderFrom)
	if !ok {
		rf = writerOnly{c.ResponseWriter}
	}
	n, err := rf.ReadFrom(r)
	c.n += n
	return n, err
}

// writerOnly gives a plain writer a ReadFrom by copying.
type writerOnly struct{ io.Writer }

func (w writerOnly) ReadFrom(r io.Reader) (int64, error) { return io.Copy(w.Writer, r) }

func (c *countingWriter) code() int {
	if c.status == 0 {
		return http.StatusOK
	}
	return c.status
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
