package folder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// TAPPaaS TestOneShotConsumption.test_consume_renames_and_hides
func TestConsumeRenamesAndHides(t *testing.T) {
	ctx := context.Background()
	g, _ := testRegistry(t)
	if _, err := g.Put(ctx, registry.Registration{Name: "tappaas3", MACs: []string{"aa:bb:cc:dd:ee:03"}, Created: created}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 7, 7, 8, 30, 0, 0, time.UTC)
	rec := registry.ConsumeRecord{Time: at, ClientIP: "10.0.0.119", MACs: []string{"AA:BB:CC:DD:EE:03"}, Serial: "SN-1234", UUID: "bcf43ddf-6d92-4ace-b93f-76f71ffe4495"}
	got, err := g.Consume(ctx, "tappaas3", rec)
	if err != nil {
		t.Fatal(err)
	}
	want := registry.Registration{Name: "tappaas3", MACs: []string{"aa:bb:cc:dd:ee:03"}, Created: created, Consumed: &rec}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Consume (-want +got):\n%s", diff)
	}

	pending, err := g.Pending(ctx)
	if err != nil || len(pending) != 0 {
		t.Errorf("Pending after Consume = %+v, %v; want none", pending, err)
	}
	if _, _, err := registry.Match(pending, []string{"aa:bb:cc:dd:ee:03"}, "", ""); !errors.Is(err, registry.ErrNoMatch) {
		t.Errorf("Match after Consume = %v, want ErrNoMatch", err)
	}
	if _, err := os.Stat(filepath.Join(g.Dir(), "tappaas3.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the pending file is still there: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(g.Dir(), "tappaas3.json.consumed"))
	if err != nil {
		t.Fatalf("no .consumed file: %v", err)
	}
	for _, s := range []string{`"install_ip": "10.0.0.119"`, `"consumed_at": "2026-07-07T08:30:00+00:00"`, `"consumed_serial": "SN-1234"`, `"AA:BB:CC:DD:EE:03"`} {
		if !strings.Contains(string(data), s) {
			t.Errorf("the consumed file lacks %s:\n%s", s, data)
		}
	}
	consumed, err := g.Consumed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]registry.Registration{want}, consumed); diff != "" {
		t.Errorf("Consumed (-want +got):\n%s", diff)
	}

	// A second consume fails (TAPPaaS returns False).
	if _, err := g.Consume(ctx, "tappaas3", rec); !errors.Is(err, registry.ErrAlreadyConsumed) {
		t.Errorf("second Consume = %v, want ErrAlreadyConsumed", err)
	}
	if _, err := g.Consume(ctx, "never", rec); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("Consume of an unknown name = %v, want ErrNotFound", err)
	}
	if err := g.Delete(ctx, "tappaas3"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("Delete of a consumed registration = %v, want ErrNotFound", err)
	}
}

func TestConsumeFillsInTheTime(t *testing.T) {
	ctx := context.Background()
	g, _ := testRegistry(t)
	if _, err := g.Put(ctx, registry.Registration{Name: "tappaas3"}); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	got, err := g.Consume(ctx, "tappaas3", registry.ConsumeRecord{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Consumed.Time.Before(before.Add(-time.Second)) || got.Consumed.Time.After(time.Now().Add(time.Second)) {
		t.Errorf("consumed at %v, want about now", got.Consumed.Time)
	}
}

func TestConsumedListsTAPPaaSFilesAsConsumed(t *testing.T) {
	g, _ := testRegistry(t)
	for _, f := range []string{"tappaas-consumed.json.consumed"} {
		if err := os.WriteFile(filepath.Join(g.Dir(), f), readFixture(t, f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// TAPPaaS's consume(name) without install_ip records nothing.
	if err := os.WriteFile(filepath.Join(g.Dir(), "bare.json.consumed"), []byte(`{"name":"bare"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := g.Consumed(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "bare" || got[0].Consumed == nil || got[1].Consumed.ClientIP != "10.0.0.119" {
		t.Errorf("Consumed = %+v", got)
	}
}

func TestConsumeHasExactlyOneWinnerAmongGoroutines(t *testing.T) {
	ctx := context.Background()
	g, _ := testRegistry(t)
	if _, err := g.Put(ctx, registry.Registration{Name: "tappaas3"}); err != nil {
		t.Fatal(err)
	}
	// Half the goroutines share g; the other half each open their own
	// Registrations, as separate processes would, so only the lock file and the
	// rename keep them apart.
	state := filepath.Dir(g.Dir())
	const n = 100
	var (
		wg          sync.WaitGroup
		start       = make(chan struct{})
		mu          sync.Mutex
		wins, loses int
		others      []error
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reg := g
			if i%2 == 1 {
				var err error
				if reg, err = OpenRegistrations(state, nil); err != nil {
					mu.Lock()
					others = append(others, err)
					mu.Unlock()
					return
				}
			}
			<-start
			_, err := reg.Consume(ctx, "tappaas3", registry.ConsumeRecord{ClientIP: fmt.Sprint("10.0.0.", i)})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, registry.ErrAlreadyConsumed):
				loses++
			default:
				others = append(others, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if wins != 1 || loses != n-1 || len(others) != 0 {
		t.Errorf("%d winners, %d ErrAlreadyConsumed, other errors %v; want 1, %d, none", wins, loses, others, n-1)
	}
	assertNoClaims(t, g.Dir())
}

func assertNoClaims(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.Contains(e.Name(), claimInfix) || strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// TestConsumeHelperProcess is not a test: TestConsumeHasExactlyOneWinnerAmongProcesses
// runs the test binary with it to consume from another process.
func TestConsumeHelperProcess(t *testing.T) {
	state := os.Getenv("ANSWER_TEST_CONSUME_STATE")
	if state == "" {
		t.Skip("helper process for TestConsumeHasExactlyOneWinnerAmongProcesses")
	}
	g, err := OpenRegistrations(state, nil)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(4)
	}
	for { // start together
		if _, err := os.Stat(filepath.Join(state, "go")); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	_, err = g.Consume(context.Background(), "tappaas3", registry.ConsumeRecord{ClientIP: os.Getenv("ANSWER_TEST_CONSUME_IP")})
	switch {
	case err == nil:
		os.Exit(0)
	case errors.Is(err, registry.ErrAlreadyConsumed):
		os.Exit(3)
	}
	fmt.Println("error:", err)
	os.Exit(4)
}

func TestConsumeHasExactlyOneWinnerAmongProcesses(t *testing.T) {
	ctx := context.Background()
	g, _ := testRegistry(t)
	if _, err := g.Put(ctx, registry.Registration{Name: "tappaas3"}); err != nil {
		t.Fatal(err)
	}
	state := filepath.Dir(g.Dir())
	const n = 8
	cmds := make([]*exec.Cmd, n)
	outs := make([]strings.Builder, n)
	for i := range cmds {
		c := exec.Command(os.Args[0], "-test.run=^TestConsumeHelperProcess$", "-test.count=1")
		c.Env = append(os.Environ(), "ANSWER_TEST_CONSUME_STATE="+state, fmt.Sprint("ANSWER_TEST_CONSUME_IP=10.0.1.", i))
		c.Stdout, c.Stderr = &outs[i], &outs[i]
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = c
	}
	time.Sleep(50 * time.Millisecond)
	if err := os.WriteFile(filepath.Join(state, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wins, loses := 0, 0
	for i, c := range cmds {
		err := c.Wait()
		var ee *exec.ExitError
		switch {
		case err == nil:
			wins++
		case errors.As(err, &ee) && ee.ExitCode() == 3:
			loses++
		default:
			t.Errorf("process %d: %v\n%s", i, err, outs[i].String())
		}
	}
	if wins != 1 || loses != n-1 {
		t.Errorf("%d winners and %d ErrAlreadyConsumed among %d processes; want 1 and %d", wins, loses, n, n-1)
	}
	consumed, err := g.Consumed(ctx)
	if err != nil || len(consumed) != 1 || !strings.HasPrefix(consumed[0].Consumed.ClientIP, "10.0.1.") {
		t.Errorf("Consumed = %+v, %v", consumed, err)
	}
	assertNoClaims(t, g.Dir())
}

// A consumer killed after claiming leaves <name>.json.claim-*; the next
// lock holder recovers it.
func TestInterruptedConsumptionIsRecovered(t *testing.T) {
	pendingJSON := `{"name":"tappaas3","macs":[],"boot_disk":"sda","pools":[],"created":"2026-07-06T12:00:00+00:00"}`
	recordedJSON := `{"name":"tappaas3","macs":[],"boot_disk":"sda","pools":[],"created":"2026-07-06T12:00:00+00:00","consumed_at":"2026-07-07T08:30:00+00:00","install_ip":"10.0.0.9"}`
	newerJSON := `{"name":"tappaas3","macs":["aa:bb:cc:dd:ee:09"],"boot_disk":"sda","pools":[],"created":"2026-07-08T12:00:00+00:00"}`
	tests := map[string]struct {
		files        map[string]string
		wantPending  []string // MACs of the pending tappaas3, nil for none
		wantConsumed string   // client IP recorded, "" for no consumed file
		via          string   // "open" or "consume"
	}{
		"a claim without the record goes back to pending": {
			files: map[string]string{"tappaas3.json.claim-01": pendingJSON}, wantPending: []string{}, via: "open",
		},
		"a claim holding the record is finished as consumed": {
			files: map[string]string{"tappaas3.json.claim-02": recordedJSON}, wantConsumed: "10.0.0.9", via: "open",
		},
		"a claim without the record yields to a newer registration": {
			files:       map[string]string{"tappaas3.json.claim-03": pendingJSON, "tappaas3.json": newerJSON},
			wantPending: []string{"aa:bb:cc:dd:ee:09"}, via: "open",
		},
		"a claim holding the record replaces an older consumed file": {
			files:        map[string]string{"tappaas3.json.claim-04": recordedJSON, "tappaas3.json.consumed": pendingJSON},
			wantConsumed: "10.0.0.9", via: "open",
		},
		"Consume recovers first, then consumes the restored registration": {
			files: map[string]string{"tappaas3.json.claim-05": pendingJSON}, wantConsumed: "10.0.0.77", via: "consume",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			state := t.TempDir()
			dir := filepath.Join(state, "registrations")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			var logs syncBuffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			var g *Registrations
			open := func() {
				var err error
				if g, err = OpenRegistrations(state, log); err != nil {
					t.Fatal(err)
				}
			}
			if tc.via == "consume" {
				open() // before the claim exists, so only Consume can recover it
			}
			for f, content := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tc.via == "open" {
				open()
			} else if _, err := g.Consume(ctx, "tappaas3", registry.ConsumeRecord{ClientIP: "10.0.0.77"}); err != nil {
				t.Fatalf("Consume: %v\n%s", err, logs.String())
			}
			if !strings.Contains(logs.String(), "interrupted consumption") {
				t.Errorf("the recovery was not logged:\n%s", logs.String())
			}
			assertNoClaims(t, dir)
			pending, err := g.Pending(ctx)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.wantPending == nil && len(pending) != 0:
				t.Errorf("Pending = %+v, want none", pending)
			case tc.wantPending != nil && len(pending) != 1:
				t.Errorf("Pending = %+v, want tappaas3", pending)
			case tc.wantPending != nil:
				if diff := cmp.Diff(tc.wantPending, pending[0].MACs, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("pending MACs (-want +got):\n%s", diff)
				}
			}
			consumed, err := g.Consumed(ctx)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.wantConsumed == "" && len(consumed) != 0:
				t.Errorf("Consumed = %+v, want none", consumed)
			case tc.wantConsumed != "" && (len(consumed) != 1 || consumed[0].Consumed.ClientIP != tc.wantConsumed):
				t.Errorf("Consumed = %+v, want one recording %s", consumed, tc.wantConsumed)
			}
		})
	}
}

func TestConsumeWaitsForTheLockUntilTheContextEnds(t *testing.T) {
	g, _ := testRegistry(t)
	if _, err := g.Put(context.Background(), registry.Registration{Name: "tappaas3"}); err != nil {
		t.Fatal(err)
	}
	unlock, err := g.lock(context.Background(), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	other, err := OpenRegistrations(filepath.Dir(g.Dir()), nil) // like another process
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := other.Consume(ctx, "tappaas3", registry.ConsumeRecord{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Consume while another holds the lock = %v, want context.DeadlineExceeded", err)
	}
}
