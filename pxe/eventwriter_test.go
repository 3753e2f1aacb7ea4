package pxe

import (
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/dhcpserver"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/netboot"
)

// stuckRecorder is a backend whose event log does not take an event
// until its gate opens (a log on a disk that stalls).
type stuckRecorder struct {
	allowFunc
	gate chan struct{}
	mu   sync.Mutex
	got  []backend.Event
}

func (r *stuckRecorder) Record(_ context.Context, e backend.Event) error {
	<-r.gate
	r.mu.Lock()
	r.got = append(r.got, e)
	r.mu.Unlock()
	return nil
}

func (r *stuckRecorder) History(context.Context) ([]backend.Event, error) { return nil, nil }

// TestBootStepsAreRecordedOffTheReplyPath: with the event log stuck, the
// window's proxy-DHCP events (each offer's step) go on at once: the
// steps the writer's queue cannot hold are dropped and counted in GET
// /metrics. The refusal of an answer request is never dropped: it waits
// for the log, and is in it once the log moves again, with every step
// not dropped.
func TestBootStepsAreRecordedOffTheReplyPath(t *testing.T) {
	rec := &stuckRecorder{allowFunc: allowAll, gate: make(chan struct{})}
	s := &Server{cfg: Config{RecordBootSteps: true}, log: slog.New(slog.DiscardHandler)}
	m := &netboot.Metrics{}
	w := s.eventWriter(rec, m)
	h, err := netboot.New(netboot.Config{Backend: rec, BaseURL: "http://192.0.2.10:8090", Timeline: s.bootSteps(w), Metrics: m,
		Record: func(ctx context.Context, e backend.Event) error { return w.Append(ctx, e) }})
	if err != nil {
		t.Fatal(err)
	}
	const offers = 3 * events.DefaultQueue
	done := make(chan time.Duration)
	go func() {
		start := time.Now()
		for i := range offers {
			mac := net.HardwareAddr{0x52, 0x54, 0, 0, 0, 0}
			binary.BigEndian.PutUint32(mac[2:], uint32(i))
			h.Net(dhcpEvent(dhcpserver.Event{Kind: events.DHCPOffer, MAC: mac, Arch: "7 (UEFI x86-64)", File: "snponly.efi"}))
		}
		done <- time.Since(start)
	}()
	select {
	case took := <-done:
		t.Logf("%d offers' events with the log stuck: %v", offers, took)
	case <-time.After(10 * time.Second):
		close(rec.gate)
		t.Fatal("the offers' events waited for the stuck event log")
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	mm := regexp.MustCompile(`(?m)^plasma_pxe_boot_events_dropped_total (\d+)$`).FindStringSubmatch(string(body))
	if mm == nil {
		t.Fatalf("GET /metrics has no plasma_pxe_boot_events_dropped_total:\n%s", body)
	}
	dropped, _ := strconv.Atoi(mm[1])
	if dropped < offers-events.DefaultQueue-eventBatch {
		t.Errorf("dropped %d of %d steps with a queue of %d", dropped, offers, events.DefaultQueue)
	}

	answered := make(chan int)
	go func() {
		resp, err := http.Post(srv.URL+"/answer", "application/json", strings.NewReader("not json"))
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	select {
	case code := <-answered:
		t.Fatalf("the answer request ended (%d) before its refusal was recorded", code)
	case <-time.After(300 * time.Millisecond):
	}
	close(rec.gate)
	if code := <-answered; code != http.StatusBadRequest {
		t.Errorf("answer request: %d, want 400", code)
	}
	w.Close()
	steps, refusals := 0, 0
	for _, e := range rec.got {
		switch e.Kind {
		case events.DHCPOffer:
			steps++
		case events.Refused:
			refusals++
		}
	}
	if refusals != 1 || steps+dropped != offers || int64(dropped) != w.Dropped() {
		t.Errorf("log: %d refusals (want 1), %d steps + %d dropped (want %d; the writer counted %d)", refusals, steps, dropped, offers, w.Dropped())
	}
}
