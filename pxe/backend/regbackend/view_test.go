package regbackend_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// countingStore counts the reads of all pending registrations.
type countingStore struct {
	*folder.Registrations
	scans atomic.Int64
}

func (c *countingStore) Scan(ctx context.Context) ([]registry.Registration, []registry.Broken, error) {
	c.scans.Add(1)
	return c.Registrations.Scan(ctx)
}

// viewEnv is a backend on a registrations folder, and a second store on
// the same folder standing for another process (the CLI registering).
type viewEnv struct {
	b     *regbackend.Backend
	reg   *countingStore
	other *folder.Registrations
}

func newViewEnv(t *testing.T, regs ...registry.Registration) *viewEnv {
	t.Helper()
	state := t.TempDir()
	st, err := folder.OpenRegistrations(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	other, err := folder.OpenRegistrations(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range regs {
		if _, err := st.Put(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	sec, err := folder.OpenSecrets(filepath.Join(t.TempDir(), "secrets"))
	if err != nil {
		t.Fatal(err)
	}
	reg := &countingStore{Registrations: st}
	b, err := regbackend.New(regbackend.Config{Store: reg, Secrets: sec, StateDir: state, Events: folder.OpenEvents(folder.EventsPath(state), folder.EventsOptions{}), AllowRefresh: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return &viewEnv{b: b, reg: reg, other: other}
}

func (e *viewEnv) answer(t *testing.T, macs ...string) (*backend.Answer, error) {
	t.Helper()
	si, err := answer.ParseSystemInfo(body("9.2", macs...), "application/json")
	if err != nil {
		t.Fatal(err)
	}
	return claimed(e.b.Answer(context.Background(), backend.AnswerRequest{Info: si, Version: answer.Version92, ClientIP: "192.0.2.9"}))
}

// claimed takes the window's claim step of an answer Answer returned,
// returning the claim's error as Answer's.
func claimed(res *backend.Answer, err error) (*backend.Answer, error) {
	if err != nil || res.Claim == nil {
		return res, err
	}
	if err := res.Claim(context.Background()); err != nil {
		return nil, err
	}
	return res, nil
}

func stormMAC(i int) string { return fmt.Sprintf("52:54:00:00:%02x:%02x", i>>8, i&0xff) }

// TestConcurrentRequestsShareReadsOfTheRegistrations: n machines ask for
// their script and their answer at once; each gets its own registration,
// once, and the registrations are read a few times, not once per
// request (the storm of bench/stormload: 1 000 requests each listing
// 1 000 files).
func TestConcurrentRequestsShareReadsOfTheRegistrations(t *testing.T) {
	const n = 200
	var regs []registry.Registration
	for i := range n {
		regs = append(regs, mustReg(t, fmt.Sprintf("node%d", i), []string{stormMAC(i)}, "sda"))
	}
	e := newViewEnv(t, regs...)
	var mu sync.Mutex
	var bad []string
	fail := func(format string, args ...any) {
		mu.Lock()
		bad = append(bad, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	all := func(f func(i int, want string)) {
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { f(i, fmt.Sprintf("node%d", i)) })
		}
		wg.Wait()
		if len(bad) > 0 {
			t.Fatalf("%d failures, first: %s", len(bad), bad[0])
		}
	}
	all(func(i int, want string) {
		bt, err := e.b.Boot(context.Background(), stormMAC(i))
		if err != nil || bt.Node != want {
			fail("boot %s: %+v, %v", want, bt, err)
			return
		}
		a, err := e.answer(t, strings.ToUpper(stormMAC(i)))
		if err != nil || a.Node != want {
			fail("answer %s: %+v, %v", want, a, err)
		}
	})
	// Before, each of the 2n requests read all n registrations.
	first := e.reg.scans.Load()
	if first > 20 {
		t.Errorf("%d reads of all registrations for %d boots and answers, want them shared (at most 20)", first, 2*n)
	}
	// A second answer is refused: it misses in the shared read and reads
	// afresh (another process may have registered what pins it), shared
	// between those waiting at once.
	all(func(i int, want string) {
		a, err := e.answer(t, stormMAC(i))
		if !errors.Is(err, regbackend.ErrNoMatchRefusal) {
			fail("second answer %s: %+v, %v; want %v", want, a, err, regbackend.ErrNoMatchRefusal)
		}
	})
	t.Logf("%d reads of all registrations for %d boots and answers; %d for %d refused answers", first, 2*n, e.reg.scans.Load()-first, n)
	consumed, err := e.reg.Consumed(context.Background())
	if err != nil || len(consumed) != n {
		t.Fatalf("%d consumed, %v; want %d (each once)", len(consumed), err, n)
	}
	pending, _, _ := e.reg.Registrations.Scan(context.Background())
	if len(pending) != 0 {
		t.Errorf("%d still pending", len(pending))
	}
}

// TestAnotherProcessesChangesAreSeenAtOnce: what another process
// registers, re-registers or deletes is what the next request sees,
// although the backend answers pinned machines from a shared read.
func TestAnotherProcessesChangesAreSeenAtOnce(t *testing.T) {
	a := mustReg(t, "a", []string{"52:54:00:00:00:0a"}, "sda")
	e := newViewEnv(t, a, mustReg(t, "b", []string{"52:54:00:00:00:0b"}, "sda"))
	ctx := context.Background()
	boot := func(mac string) backend.Boot {
		t.Helper()
		bt, err := e.b.Boot(ctx, mac)
		if err != nil {
			t.Fatal(err)
		}
		return bt
	}
	if got := boot("52:54:00:00:00:0a").Node; got != "a" {
		t.Fatalf("Boot(a's MAC) = %q, want a", got)
	}
	// A new registration: not in the shared read yet.
	if _, err := e.other.Put(ctx, mustReg(t, "c", []string{"52:54:00:00:00:0c"}, "nvme0n1")); err != nil {
		t.Fatal(err)
	}
	if got := boot("52:54:00:00:00:0c").Node; got != "c" {
		t.Errorf("Boot(new c's MAC) = %q, want c", got)
	}
	// a re-registered with another MAC: its old MAC is not a's any more.
	moved := mustReg(t, "a", []string{"52:54:00:00:00:aa"}, "sdb")
	if _, err := e.other.Register(ctx, moved, registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := boot("52:54:00:00:00:0a"); got.Node != "" {
		t.Errorf("Boot(a's old MAC) = %+v, want no registration", got)
	}
	if _, err := e.answer(t, "52:54:00:00:00:0a"); !errors.Is(err, regbackend.ErrNoMatchRefusal) {
		t.Errorf("answer for a's old MAC: %v, want %v", err, regbackend.ErrNoMatchRefusal)
	}
	// b deleted.
	if err := e.other.Delete(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if got := boot("52:54:00:00:00:0b"); got.Node != "" {
		t.Errorf("Boot(deleted b's MAC) = %+v, want no registration", got)
	}
	// c changed in its boot disk: the answer is built from the file as
	// it is now.
	c2 := mustReg(t, "c", []string{"52:54:00:00:00:0c"}, "sdz")
	if _, err := e.other.Register(ctx, c2, registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	ans, err := e.answer(t, "52:54:00:00:00:0c")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("c", ans.Node); diff != "" {
		t.Errorf("answered node (-want +got):\n%s", diff)
	}
	if got := fmt.Sprint(ans.Answer.DiskSetup.DiskList, ans.Answer.DiskSetup.Filter); !strings.Contains(got, "sdz") {
		t.Errorf("answer's disk filter %s, want the re-registered sdz", got)
	}
	// Consumed by this backend: the next boot exits.
	if got := boot("52:54:00:00:00:0c"); got.Node != "" || !strings.Contains(got.Reason, "consumed") {
		t.Errorf("Boot(consumed c's MAC) = %+v, want the exit of a consumed registration", got)
	}
	if got := boot("52:54:00:00:00:aa").Node; got != "a" {
		t.Errorf("Boot(a's new MAC) = %q, want a", got)
	}
}

// TestConsumeListsTheFolderOnlyAfterAnotherHolder: Consume looks for what
// a killed holder left (temporary files, claims) only when another holder
// had the folder's lock since this store last did; a store consuming
// alone does not list the folder each time (1 000 answers at once listed
// 2 000 files twice each, under the lock).
func TestConsumeListsTheFolderOnlyAfterAnotherHolder(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	g, err := folder.OpenRegistrations(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b", "c"} {
		if _, err := g.Put(ctx, mustReg(t, n, nil, "sda")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := g.Consume(ctx, "a", registry.ConsumeRecord{}); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(g.Dir(), atomicfile.TempPrefix+"left")
	if err := os.WriteFile(stale, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Consume(ctx, "b", registry.ConsumeRecord{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(stale); err != nil {
		t.Fatalf("the folder was cleaned with no other holder since: %v", err)
	}
	// Another process takes the lock (and could have died holding it).
	other, err := folder.OpenRegistrations(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Delete(ctx, "nothing"); !errors.Is(err, registry.ErrNotFound) {
		t.Fatalf("Delete = %v", err)
	}
	if _, err := other.Register(ctx, mustReg(t, "d", nil, "sda"), registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Consume(ctx, "c", registry.ConsumeRecord{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after another holder, Consume left the stale temporary file: %v", err)
	}
}
