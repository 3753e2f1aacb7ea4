package installtest

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/internal/storetest"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// T is what a check needs of a test ([storetest.T]).
type T = storetest.T

// Harness gives the suite stores of the implementation under test: New
// is required; a nil Reopen skips the check of a restart.
type Harness = storetest.Harness[registry.Installs]

// Check is one conformance check.
type Check = storetest.Check[Harness]

// Checks returns the suite's checks.
func Checks() []Check {
	return []Check{
		{Name: "PutGetList", Run: putGetList},
		{Name: "PutReplaces", Run: putReplaces},
		{Name: "InvalidNameRefused", Run: invalidName},
		{Name: "ConcurrentPuts", Run: concurrentPuts},
		{Name: "Reopen", Run: reopen},
	}
}

// Run runs every check as a subtest of t.
func Run(t *testing.T, h Harness) { storetest.Run(t, h, Checks()) }

// prefixes compares addresses by value (netip.Prefix has unexported
// fields).
func prefixes() cmp.Option { return cmp.Comparer(func(a, b netip.Prefix) bool { return a == b }) }

// Sample returns a full install of name, as a 9.2 installer reports it.
func Sample(name string) registry.Install {
	return registry.Install{
		Name:     name,
		Reported: time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC),
		ClientIP: "192.0.2.10",
		Report: answer.InstallReport{
			Schema: "1.2", FQDN: name + ".lab.example", MachineID: "0123456789abcdef0123456789abcdef",
			ProductVersion: "9.2.0", Kernel: "6.17.2-1-pve", BootMode: "efi", SecureBoot: true,
			Management: &answer.ReportInterface{Name: "nic0", MAC: "52:54:00:12:34:56", Address: netip.MustParsePrefix("192.0.2.10/24")},
			MACs:       []string{"52:54:00:12:34:56", "52:54:00:12:34:57"},
			HostKeys:   []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"},
			BootDisks:  []answer.ReportDisk{{Name: "/dev/nvme0n1", Serial: "S4EVNX0R", Size: 512110190592}},
		},
	}
}

func putGetList(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	if _, err := s.Get(ctx, "pve1"); !errors.Is(err, registry.ErrNoInstall) {
		t.Errorf("Get of an empty store: %v; want ErrNoInstall", err)
	}
	if l, err := s.List(ctx); err != nil || len(l) != 0 {
		t.Errorf("List of an empty store: %v, %v", l, err)
	}
	b, a := Sample("pve2"), Sample("pve1")
	for _, in := range []registry.Install{b, a} {
		storetest.NoError(t, s.Put(ctx, in), "Put "+in.Name)
	}
	got, err := s.Get(ctx, "pve1")
	storetest.NoError(t, err, "Get")
	if diff := cmp.Diff(a, got, prefixes()); diff != "" {
		t.Errorf("Get (-put +got):\n%s", diff)
	}
	l, err := s.List(ctx)
	storetest.NoError(t, err, "List")
	if diff := cmp.Diff([]registry.Install{a, b}, l, prefixes()); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
}

func putReplaces(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	first, second := Sample("pve1"), Sample("pve1")
	second.Report.Management.Address = netip.MustParsePrefix("192.0.2.99/24")
	second.Report.HostKeys = nil
	for _, in := range []registry.Install{first, second} {
		storetest.NoError(t, s.Put(ctx, in), "Put "+in.Name)
	}
	got, err := s.Get(ctx, "pve1")
	storetest.NoError(t, err, "Get")
	if diff := cmp.Diff(second, got, prefixes()); diff != "" {
		t.Errorf("Get after a second Put (-second +got):\n%s", diff)
	}
	if l, _ := s.List(ctx); len(l) != 1 {
		t.Errorf("List after two Puts of one name: %d reports", len(l))
	}
}

func invalidName(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	for _, name := range []string{"", "../x", "a/b", "a.json"} {
		in := Sample("x")
		in.Name = name
		if err := s.Put(ctx, in); !errors.Is(err, registry.ErrInvalidName) {
			t.Errorf("Put of name %q: %v; want ErrInvalidName", name, err)
		}
	}
	if l, _ := s.List(ctx); len(l) != 0 {
		t.Errorf("List after refused Puts: %+v", l)
	}
}

func concurrentPuts(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	errs := storetest.Race(16, func(i int) error { return s.Put(ctx, Sample(fmt.Sprintf("pve%d", i%4))) })
	for i, err := range errs {
		if err != nil {
			t.Errorf("Put %d: %v", i, err)
		}
	}
	l, err := s.List(ctx)
	if err != nil || len(l) != 4 {
		t.Errorf("List after concurrent Puts of 4 names: %d reports, %v", len(l), err)
	}
}

func reopen(t T, h Harness) {
	if h.Reopen == nil {
		t.Logf("the store has no state to reopen")
		return
	}
	ctx := context.Background()
	s := h.New(t)
	storetest.NoError(t, s.Put(ctx, Sample("pve1")), "Put pve1")
	s = h.Reopen(t, s)
	got, err := s.Get(ctx, "pve1")
	storetest.NoError(t, err, "Get")
	if diff := cmp.Diff(Sample("pve1"), got, prefixes()); diff != "" {
		t.Errorf("Get after reopening (-put +got):\n%s", diff)
	}
}
