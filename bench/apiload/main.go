// Command apiload measures node-provisioner's management API: it runs a
// daemon (package daemon) on a fresh state folder on loopback, creates
// -n registrations through the Go client with -c at once (latency p50,
// p99 and registrations per second), then opens a window through the
// API and, with one pending registration per machine (the rest removed),
// lets -storm machines boot at once (each asks for its iPXE
// script and posts its system info to /answer) while an event stream
// follows; it reports how long events took from being recorded to being
// delivered on the stream (p50, p99, max), and how long each POST
// /answer took. With NODE_PROVISIONER_STORE set (a postgres:// URL of an
// empty database) the daemon keeps its state there instead of in the
// folder, as node-provisioner --store does (bench/run.sh store). It
// prints JSON. It is a benchmark tool, not a test: go run ./bench/apiload.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/daemon"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store"
)

type percentiles struct {
	P50ms float64 `json:"p50_ms"`
	P99ms float64 `json:"p99_ms"`
	MaxMs float64 `json:"max_ms"`
}

type result struct {
	Registrations  int         `json:"registrations"`
	Concurrency    int         `json:"concurrency"`
	RegisterFailed int         `json:"register_failed"`
	Seconds        float64     `json:"seconds"`
	PerSecond      float64     `json:"per_second"`
	Register       percentiles `json:"register"`
	// Direct is the same registrations written straight to a
	// folder.Registrations (as node-provisioner register does), for the API's
	// overhead.
	DirectPerSecond float64     `json:"direct_per_second"`
	Direct          percentiles `json:"direct"`
	StormClients    int         `json:"storm_clients"`
	StormEvents     int         `json:"storm_events_delivered"`
	StormSeconds    float64     `json:"storm_seconds"`
	// EventDelivery is from an event's time to its delivery on the
	// stream, by kind: a boot step (script) is stamped as it is recorded;
	// an answer as its request came in, so its figure includes the time
	// the window took to answer.
	EventDelivery map[string]percentiles `json:"event_delivery"`
	// StormAnswer is each storm machine's POST /answer.
	StormAnswer percentiles `json:"storm_answer"`
	// Store is the store the daemon kept its state in.
	Store string `json:"store"`
	// WindowGet is GET /api/v1/window through the client every 100 ms
	// during the storm: the API's responsiveness under it.
	WindowGet percentiles `json:"window_get_during_storm"`
	Errors    []string    `json:"errors,omitempty"`
}

func pct(ds []time.Duration) percentiles {
	if len(ds) == 0 {
		return percentiles{}
	}
	slices.Sort(ds)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return percentiles{P50ms: ms(ds[len(ds)/2]), P99ms: ms(ds[min(len(ds)-1, len(ds)*99/100)]), MaxMs: ms(ds[len(ds)-1])}
}

func main() {
	n := flag.Int("n", 1000, "registrations to create")
	conc := flag.Int("c", 16, "registrations at once")
	storm := flag.Int("storm", 200, "machines booting at once in the storm (at most -n)")
	sysinfo := flag.String("sysinfo", "answer/testdata/sysinfo/pve-9.2-synthetic.json", "an installer's posted system info, for the storm")
	flag.Parse()
	res, err := run(*n, *conc, min(*storm, *n), *sysinfo)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apiload:", err)
		os.Exit(1)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.Encode(res)
}

func mac(i int) string { return fmt.Sprintf("52:54:00:a0:%02x:%02x", i/256, i%256) }

func run(n, conc, storm int, sysinfoPath string) (*result, error) {
	info, err := os.ReadFile(sysinfoPath)
	if err != nil {
		return nil, err
	}
	state, err := os.MkdirTemp("", "apiload-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(state)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	storeURL := os.Getenv(registrar.EnvStore)
	stores, err := store.Open(ctx, state, store.Options{Store: storeURL, Openers: postgres.Openers()})
	if err != nil {
		return nil, err
	}
	defer stores.Close()
	tokens, err := stores.Tokens()
	if err != nil {
		return nil, err
	}
	tok, err := tokens.Create(ctx, "bench", apitoken.ScopeAdmin, time.Time{})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	quiet := slog.New(slog.DiscardHandler)
	d, err := daemon.New(daemon.Config{StateDir: state, SecretsDir: state + "/secrets", Store: storeURL, Listener: ln, Logger: quiet,
		// The storm comes from one loopback address: lift the per-client
		// connection bound a real storm of many addresses does not meet.
		Window: pxe.Config{HTTPAddr: "127.0.0.1:0", HTTPLimits: pxe.HTTPLimits{MaxConnsPerClient: 4 * storm}}})
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	select {
	case <-d.Ready():
	case err := <-done:
		return nil, err
	}
	c, err := client.New(client.Options{URL: "https://" + d.Addr().String(), Token: tok, Fingerprint: d.Fingerprint()})
	if err != nil {
		return nil, err
	}
	res := &result{Registrations: n, Concurrency: conc, StormClients: storm, Store: stores.Store()}

	// Registrations.
	lat := make([]time.Duration, n)
	var next atomic.Int64
	var failed atomic.Int64
	var errMu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for range conc {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				r := registry.Registration{Name: fmt.Sprintf("n%04d", i), MACs: []string{mac(i)}, BootDisk: answer.BootDisk{Kind: answer.BootDiskAny}}
				t0 := time.Now()
				_, err := c.Register(ctx, r, registry.RegisterOptions{})
				lat[i] = time.Since(t0)
				if err != nil {
					failed.Add(1)
					errMu.Lock()
					if len(res.Errors) < 5 {
						res.Errors = append(res.Errors, err.Error())
					}
					errMu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	res.PerSecond = float64(n) / res.Seconds
	res.Register = pct(lat)
	res.RegisterFailed = int(failed.Load())

	// The same, straight to a store.
	if err := direct(ctx, res, stores.Registrations(), n, conc); err != nil {
		return nil, err
	}

	// The boot storm, as bench/run.sh's: one pending registration per
	// booting machine (the others are removed through the API).
	for i := storm; i < n; i++ {
		if err := c.Unregister(ctx, fmt.Sprintf("n%04d", i)); err != nil {
			return nil, err
		}
	}
	// The boot storm, followed by an event stream.
	w, err := c.OpenWindow(ctx, 10*time.Minute)
	if err != nil {
		return nil, err
	}
	var delMu sync.Mutex
	var delivery []time.Duration
	byKind := map[events.Kind][]time.Duration{}
	want := 2 * storm // a script and an answer event per machine
	all := make(chan struct{})
	streamCtx, stopStream := context.WithCancel(ctx)
	defer stopStream()
	go c.Events(streamCtx, client.FromNow, func(_ string, e backend.Event) error {
		delMu.Lock()
		defer delMu.Unlock()
		d := time.Since(e.Time)
		delivery = append(delivery, d)
		byKind[e.Kind] = append(byKind[e.Kind], d)
		if len(delivery) == want {
			close(all)
		}
		return nil
	})
	time.Sleep(500 * time.Millisecond) // the stream is open
	var getLat []time.Duration
	probeDone := make(chan struct{})
	go func() {
		defer close(probeDone)
		for streamCtx.Err() == nil {
			t0 := time.Now()
			if _, err := c.Window(streamCtx); err == nil {
				getLat = append(getLat, time.Since(t0))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	hc := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: storm}}
	base := "http://" + w.HTTP
	answers := make([]time.Duration, storm)
	start = time.Now()
	for i := range storm {
		wg.Go(func() {
			m := mac(i)
			resp, err := hc.Get(base + "/boot.ipxe?mac=" + m)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			body := bytes.ReplaceAll(info, []byte("52:54:00:BA:5E:11"), []byte(strings.ToUpper(m)))
			t0 := time.Now()
			resp, err = hc.Post(base+"/answer", "application/json", bytes.NewReader(body))
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				answers[i] = time.Since(t0)
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("answer of %s: %s", m, resp.Status)
				}
			}
			if err != nil {
				errMu.Lock()
				if len(res.Errors) < 10 {
					res.Errors = append(res.Errors, err.Error())
				}
				errMu.Unlock()
			}
		})
	}
	wg.Wait()
	select {
	case <-all:
	case <-time.After(30 * time.Second):
	}
	res.StormSeconds = time.Since(start).Seconds()
	res.StormAnswer = pct(answers)
	delMu.Lock()
	res.StormEvents = len(delivery)
	res.EventDelivery = map[string]percentiles{}
	for k, ds := range byKind {
		res.EventDelivery[string(k)] = pct(ds)
	}
	delMu.Unlock()
	stopStream()
	<-probeDone
	res.WindowGet = pct(getLat)
	cancel()
	<-done
	return res, nil
}

// direct writes n registrations straight to st, the daemon's store,
// under other names and MACs, and removes them again.
func direct(ctx context.Context, res *result, st registry.Registrations, n, conc int) error {
	name := func(i int) string { return fmt.Sprintf("d%04d", i) }
	defer func() {
		for i := range n {
			st.Delete(ctx, name(i))
		}
	}()
	lat := make([]time.Duration, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range conc {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				r := registry.Registration{Name: name(i), MACs: []string{mac(n + i)}, BootDisk: answer.BootDisk{Kind: answer.BootDiskAny}}
				t0 := time.Now()
				st.Register(ctx, r, registry.RegisterOptions{})
				lat[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	res.DirectPerSecond = float64(n) / time.Since(start).Seconds()
	res.Direct = pct(lat)
	return nil
}
