package folder

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// syncBuffer is a bytes.Buffer safe for a logger used by several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testRegistry opens a registry in a new temporary state folder and
// returns it with the text its logger wrote.
func testRegistry(t testing.TB) (*Registrations, *syncBuffer) {
	t.Helper()
	var logs syncBuffer
	g, err := OpenRegistrations(t.TempDir(), slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	return g, &logs
}
func TestOpenRegistryCreatesPrivateFolder(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	g, err := OpenRegistrations(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(state, "registrations"); g.Dir() != want {
		t.Errorf("Dir() = %q, want %q", g.Dir(), want)
	}
	fi, err := os.Stat(g.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o700 {
		t.Errorf("registrations folder mode = %v, want 0700", got)
	}
}

// TAPPaaS TestCrudRoundTrip.test_register_list_load_unregister
func TestRegistryCRUD(t *testing.T) {
	ctx := context.Background()
	g, _ := testRegistry(t)
	r := registry.Registration{
		Name: "tappaas3", MACs: []string{"AA-BB-CC-DD-EE-FF"},
		BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"},
		Pools:    []registry.DataPool{mustPool(t, "tanka1=single:nvme0n1")},
	}
	replaced, err := g.Put(ctx, r)
	if err != nil || replaced {
		t.Fatalf("Put = %v, %v; want false, nil", replaced, err)
	}
	path := filepath.Join(g.Dir(), "tappaas3.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the registration file is missing: %v", err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	if raw["name"] != "tappaas3" {
		t.Errorf("file name = %v", raw["name"])
	}
	if diff := cmp.Diff([]any{"aa:bb:cc:dd:ee:ff"}, raw["macs"]); diff != "" {
		t.Errorf("file macs are not normalised (-want +got):\n%s", diff)
	}
	wantPools := []any{map[string]any{"name": "tanka1", "layout": "single", "disks": []any{"nvme0n1"}}}
	if diff := cmp.Diff(wantPools, raw["pools"]); diff != "" {
		t.Errorf("file pools (-want +got):\n%s", diff)
	}
	if s, _ := raw["created"].(string); s == "" {
		t.Errorf("created is empty")
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode = %v, want 0600", fi.Mode().Perm())
	}

	pending, err := g.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || pending[0].Name != "tappaas3" {
		t.Fatalf("Pending = %+v, want tappaas3", pending)
	}
	got, err := g.Get(ctx, "tappaas3")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(pending[0], got); diff != "" {
		t.Errorf("Get and Pending differ (-pending +get):\n%s", diff)
	}
	if got.Created.IsZero() || got.MACs[0] != "aa:bb:cc:dd:ee:ff" {
		t.Errorf("Get = %+v", got)
	}

	if err := g.Delete(ctx, "tappaas3"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the file is still there after Delete: %v", err)
	}
	// A second unregister fails (TAPPaaS returns False).
	if err := g.Delete(ctx, "tappaas3"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("second Delete = %v, want ErrNotFound", err)
	}
	if _, err := g.Get(ctx, "tappaas3"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("Get after Delete = %v, want ErrNotFound", err)
	}
	pending, err = g.Pending(ctx)
	if err != nil || len(pending) != 0 {
		t.Errorf("Pending after Delete = %+v, %v", pending, err)
	}
}

// TAPPaaS TestCrudRoundTrip.test_register_rejects_bad_name
func TestRegistryPutRefusesBadInput(t *testing.T) {
	tests := map[string]struct {
		r    registry.Registration
		want error
	}{
		"a bad name":         {registry.Registration{Name: "bad name!"}, registry.ErrInvalidName},
		"a bad MAC":          {registry.Registration{Name: "a", MACs: []string{"nonsense"}}, registry.ErrInvalidMAC},
		"a bad boot disk":    {registry.Registration{Name: "a", BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "/dev/sda"}}, registry.ErrInvalidBootDisk},
		"a bad pool":         {registry.Registration{Name: "a", Pools: []registry.DataPool{{Name: "t", Layout: "raid5", Disks: []string{"sdb"}}}}, registry.ErrInvalidPool},
		"a placeholder UUID": {registry.Registration{Name: "a", UUID: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"}, registry.ErrInvalidUUID},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g, _ := testRegistry(t)
			if _, err := g.Put(context.Background(), tc.r); !errors.Is(err, tc.want) || !errors.Is(err, registry.ErrInvalidRegistration) {
				t.Fatalf("Put = %v, want %v", err, tc.want)
			}
			ents, err := os.ReadDir(g.Dir())
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if e.Name() != ".lock" {
					t.Errorf("Put of bad input left %s", e.Name())
				}
			}
		})
	}
}

func TestRegistryBadNamesNeverTouchFiles(t *testing.T) {
	ctx := context.Background()
	g, _ := testRegistry(t)
	for _, name := range []string{"../x", "a/b", "", "a.b"} {
		if _, err := g.Get(ctx, name); !errors.Is(err, registry.ErrInvalidName) {
			t.Errorf("Get(%q) = %v, want ErrInvalidName", name, err)
		}
		if err := g.Delete(ctx, name); !errors.Is(err, registry.ErrInvalidName) {
			t.Errorf("Delete(%q) = %v, want ErrInvalidName", name, err)
		}
		if _, err := g.Consume(ctx, name, registry.ConsumeRecord{}); !errors.Is(err, registry.ErrInvalidName) {
			t.Errorf("Consume(%q) = %v, want ErrInvalidName", name, err)
		}
	}
}

// TAPPaaS TestCrudRoundTrip.test_reregister_replaces
func TestRegistryReregisterReplaces(t *testing.T) {
	ctx := context.Background()
	g, logs := testRegistry(t)
	if _, err := g.Put(ctx, registry.Registration{Name: "tappaas3", MACs: []string{"aa:bb:cc:dd:ee:01"}}); err != nil {
		t.Fatal(err)
	}
	replaced, err := g.Put(ctx, registry.Registration{Name: "tappaas3", MACs: []string{"aa:bb:cc:dd:ee:02"}})
	if err != nil || !replaced {
		t.Fatalf("second Put = %v, %v; want true, nil", replaced, err)
	}
	pending, err := g.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 {
		t.Fatalf("Pending has %d entries, want 1", len(pending))
	}
	if diff := cmp.Diff([]string{"aa:bb:cc:dd:ee:02"}, pending[0].MACs); diff != "" {
		t.Errorf("MACs after re-registering (-want +got):\n%s", diff)
	}
	if !strings.Contains(logs.String(), "level=WARN msg=\"registration replaced\" node=tappaas3") {
		t.Errorf("no warning about the replacement in the log:\n%s", logs)
	}
}

func TestRegistryReregisterAfterConsumeIsPendingAgain(t *testing.T) {
	ctx := context.Background()
	g, logs := testRegistry(t)
	if _, err := g.Put(ctx, registry.Registration{Name: "tappaas3"}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Consume(ctx, "tappaas3", registry.ConsumeRecord{ClientIP: "10.0.0.5"}); err != nil {
		t.Fatal(err)
	}
	replaced, err := g.Put(ctx, registry.Registration{Name: "tappaas3", MACs: []string{"aa:bb:cc:dd:ee:02"}})
	if err != nil || replaced {
		t.Fatalf("Put after Consume = %v, %v; want false, nil", replaced, err)
	}
	if !strings.Contains(logs.String(), "pending again") {
		t.Errorf("no note that the name is pending again:\n%s", logs)
	}
	pending, err := g.Pending(ctx)
	if err != nil || len(pending) != 1 || pending[0].Consumed != nil {
		t.Fatalf("Pending = %+v, %v; want tappaas3, not consumed", pending, err)
	}
	// The old record stays until this registration is consumed in turn.
	consumed, err := g.Consumed(ctx)
	if err != nil || len(consumed) != 1 || consumed[0].Consumed.ClientIP != "10.0.0.5" {
		t.Fatalf("Consumed = %+v, %v", consumed, err)
	}
	if _, err := g.Consume(ctx, "tappaas3", registry.ConsumeRecord{ClientIP: "10.0.0.6"}); err != nil {
		t.Fatal(err)
	}
	consumed, err = g.Consumed(ctx)
	if err != nil || len(consumed) != 1 || consumed[0].Consumed.ClientIP != "10.0.0.6" || consumed[0].MACs[0] != "aa:bb:cc:dd:ee:02" {
		t.Fatalf("Consumed after the second consumption = %+v, %v", consumed, err)
	}
}

func TestRegistryPutKeepsCreatedAndClearsConsumed(t *testing.T) {
	ctx := context.Background()
	g, _ := testRegistry(t)
	r := registry.Registration{Name: "tappaas3", Created: created, Consumed: &registry.ConsumeRecord{ClientIP: "10.0.0.1"}}
	if _, err := g.Put(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := g.Get(ctx, "tappaas3")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Created.Equal(created) || got.Consumed != nil {
		t.Errorf("Get = %+v; want the given Created and no Consumed", got)
	}
}

func TestRegistryPendingSkipsWhatIsNotPending(t *testing.T) {
	ctx := context.Background()
	g, logs := testRegistry(t)
	for _, n := range []string{"b-node", "a-node", "c-node"} {
		if _, err := g.Put(ctx, registry.Registration{Name: n}); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"tappaas9.json.tmp":           `{"name":"tappaas9"}`, // TAPPaaS's temporary file
		".tmp-x.json-123":             `{"name":"x"}`,        // ours
		".tmp-y.json":                 `{"name":"y"}`,
		"served.json.consumed":        `{"name":"served"}`,
		"broken.json":                 `{"name": `,
		"bad name.json":               `{}`,
		"stolen.json.claim-0011":      `{"name":"stolen"}`,
		"notes.txt":                   "hello",
		"d-node.json.consumed.json":   `{"name":"d-node"}`, // name with dots
		"mismatch.json":               `{"name":"other"}`,
		"tappaas3.json.consumed.json": `{}`,
	}
	for n, content := range files {
		if err := os.WriteFile(filepath.Join(g.Dir(), n), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pending, err := g.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range pending {
		names = append(names, r.Name)
	}
	if diff := cmp.Diff([]string{"a-node", "b-node", "c-node"}, names); diff != "" {
		t.Errorf("Pending names (-want +got):\n%s", diff)
	}
	for _, f := range []string{"broken.json", "mismatch.json"} {
		if !strings.Contains(logs.String(), f) {
			t.Errorf("no warning naming %s:\n%s", f, logs)
		}
	}
}

func TestRegistryHonoursContext(t *testing.T) {
	g, _ := testRegistry(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.Put(ctx, registry.Registration{Name: "a"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Put = %v, want context.Canceled", err)
	}
	if _, err := g.Pending(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Pending = %v, want context.Canceled", err)
	}
	if _, err := g.Get(ctx, "a"); !errors.Is(err, context.Canceled) {
		t.Errorf("Get = %v, want context.Canceled", err)
	}
	if err := g.Delete(ctx, "a"); !errors.Is(err, context.Canceled) {
		t.Errorf("Delete = %v, want context.Canceled", err)
	}
	if _, err := g.Consume(ctx, "a", registry.ConsumeRecord{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Consume = %v, want context.Canceled", err)
	}
}

func TestOpenRegistryRemovesTemporaryFiles(t *testing.T) {
	state := t.TempDir()
	dir := filepath.Join(state, "registrations")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, ".tmp-tappaas3.json-99")
	if err := os.WriteFile(tmp, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenRegistrations(state, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary file survived: %v", err)
	}
}

// The answer server's path through the registry: a registration, the
// installer's request matched against the pending ones, and the one-shot
// consumption.
func ExampleRegistrations() {
	ctx := context.Background()
	state, err := os.MkdirTemp("", "example-registry")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(state)

	g, err := OpenRegistrations(state, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	boot, _ := registry.ParseBootDisk("25414A800205")
	pool, _ := registry.ParsePoolSpec("tanka1=single:50026B73842AD86F")
	mac, _ := registry.NormalizeMAC("AA-BB-CC-DD-EE-FF")
	if _, err := g.Put(ctx, registry.Registration{Name: "tappaas3", MACs: []string{mac}, BootDisk: boot, Pools: []registry.DataPool{pool}}); err != nil {
		fmt.Println(err)
		return
	}

	// The installer POSTs its system info; a 9.2 ISO sends upper-case MACs.
	pending, _ := g.Pending(ctx)
	r, reason, err := registry.Match(pending, []string{"AA:BB:CC:DD:EE:FF"}, "SN-1234", "")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("matched", r.Name, "by", reason, "boot filter", r.BootDisk.UdevFilter())

	if _, err := g.Consume(ctx, r.Name, registry.ConsumeRecord{ClientIP: "10.0.0.119", MACs: []string{"AA:BB:CC:DD:EE:FF"}, Serial: "SN-1234"}); err != nil {
		fmt.Println(err)
		return
	}
	_, err = g.Consume(ctx, r.Name, registry.ConsumeRecord{})
	fmt.Println(errors.Is(err, registry.ErrAlreadyConsumed))
	pending, _ = g.Pending(ctx)
	_, _, err = registry.Match(pending, []string{"AA:BB:CC:DD:EE:FF"}, "", "")
	fmt.Println(errors.Is(err, registry.ErrNoMatch))
	// Output:
	// matched tappaas3 by mac boot filter map[ID_SERIAL:*25414A800205*]
	// true
	// true
}
