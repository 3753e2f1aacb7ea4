package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/answer"
	suite "github.com/plasmactl/plasma-node/internal/storetest"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// T is what a check needs of a test ([storetest.T]).
type T = suite.T

// Harness gives the suite stores of the implementation under test.
type Harness struct {
	// New returns a new, empty store for one check. Required.
	New func(t T) registry.Registrations
	// Reopen opens s's state again, as a restarted process would, and
	// returns the new handle; s is not used afterwards. Nil skips the
	// checks of a crash.
	Reopen func(t T, s registry.Registrations) registry.Registrations
	// CrashConsume leaves registration name of s as a consumer killed
	// during [registry.Registrations.Consume] would: its claim taken and,
	// when recorded, the consume record written but not finished. Nil
	// skips those two checks (a store whose Consume is one transaction
	// has no such state).
	CrashConsume func(t T, s registry.Registrations, name string, recorded bool)
}

// Check is one conformance check.
type Check = suite.Check[Harness]

// Checks returns the suite's checks.
func Checks() []Check {
	return []Check{
		{Name: "RegisterGetDelete", Run: registerGetDelete},
		{Name: "ConcurrentRegisters", Run: concurrentRegisters},
		{Name: "PinConflicts", Run: pinConflicts},
		{Name: "RacingPinConflicts", Run: racingPinConflicts},
		{Name: "ConsumeOnce", Run: consumeOnce},
		{Name: "UndeliveredAndRearm", Run: undeliveredAndRearm},
		{Name: "CrashBeforeClaim", Run: crashBeforeClaim},
		{Name: "CrashAfterClaim", Run: crashAfterClaim},
		{Name: "SizeBounds", Run: sizeBounds},
		{Name: "StaticNetworkKept", Run: staticNetworkKept},
	}
}

// Run runs every check as a subtest of t.
func Run(t *testing.T, h Harness) { suite.Run(t, h, Checks()) }

// Racers is how many goroutines race to consume one registration.
const Racers = 1000

func reg(name string, macs ...string) registry.Registration {
	return registry.Registration{Name: name, MACs: macs, BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}}
}

func mac(i int) string { return fmt.Sprintf("52:54:00:%02x:%02x:%02x", i>>16&0xff, i>>8&0xff, i&0xff) }

func names(rs []registry.Registration) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}

func register(t T, s registry.Registrations, r registry.Registration) {
	t.Helper()
	_, err := s.Register(context.Background(), r, registry.RegisterOptions{})
	suite.NoError(t, err, "Register "+r.Name)
}

func consume(t T, s registry.Registrations, name string, rec registry.ConsumeRecord) {
	t.Helper()
	_, err := s.Consume(context.Background(), name, rec)
	suite.NoError(t, err, "Consume "+name)
}

func registerGetDelete(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	if _, err := s.Get(ctx, "node1"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("Get of an unknown name = %v, want ErrNotFound", err)
	}
	res, err := s.Register(ctx, reg("node1", "52:54:00:AA:00:01"), registry.RegisterOptions{})
	suite.NoError(t, err, "Register")
	if res.Previous != nil {
		t.Errorf("Register of a new name: Previous = %+v, want nil", res.Previous)
	}
	got, err := s.Get(ctx, "node1")
	suite.NoError(t, err, "Get")
	if got.Name != "node1" || !slices.Equal(got.MACs, []string{"52:54:00:aa:00:01"}) || got.Created.IsZero() || got.Consumed != nil {
		t.Errorf("Get = %+v, want node1 pending with its MAC normalised and Created set", got)
	}
	res, err = s.Register(ctx, reg("node1", "52:54:00:aa:00:02"), registry.RegisterOptions{})
	if err != nil || res.Previous == nil || res.Previous.Name != "node1" {
		t.Errorf("Register again = %+v, %v; want the previous node1", res, err)
	}
	pending, broken, err := s.Scan(ctx)
	if err != nil || len(broken) != 0 || !slices.Equal(names(pending), []string{"node1"}) {
		t.Errorf("Scan = %v, %v, %v; want node1 only", names(pending), broken, err)
	}
	suite.NoError(t, s.Delete(ctx, "node1"), "Delete")
	if _, err := s.Get(ctx, "node1"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("Get after Delete = %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "node1"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("Delete twice = %v, want ErrNotFound", err)
	}
	if _, err := s.Register(ctx, reg("bad/name"), registry.RegisterOptions{}); !errors.Is(err, registry.ErrInvalidName) {
		t.Errorf("Register of a bad name = %v, want ErrInvalidName", err)
	}
}

func concurrentRegisters(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	const n = 50
	errs := suite.Race(n, func(i int) error {
		_, err := s.Register(ctx, reg(fmt.Sprintf("node%02d", i), mac(i)), registry.RegisterOptions{})
		return err
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("Register node%02d: %v", i, err)
		}
	}
	pending, _, err := s.Scan(ctx)
	suite.NoError(t, err, "Scan")
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("node%02d", i))
	}
	if !slices.Equal(names(pending), want) {
		t.Errorf("Scan after %d concurrent registers = %v, want %v (sorted, none lost)", n, names(pending), want)
	}
}

func pinConflicts(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	m := "52:54:00:00:00:01"
	register(t, s, reg("a", m))
	_, err := s.Register(ctx, reg("b", m), registry.RegisterOptions{})
	var pt *registry.PinTakenError
	if !errors.Is(err, registry.ErrPinTaken) || !errors.As(err, &pt) || pt.Holder != "a" {
		t.Errorf("Register b with a's MAC = %v, want a *PinTakenError naming a", err)
	}
	if _, err := s.Get(ctx, "b"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("refused b was written: Get = %v", err)
	}
	res, err := s.Register(ctx, reg("b", m), registry.RegisterOptions{Replace: true})
	suite.NoError(t, err, "Register b replacing")
	if len(res.Moved) != 1 || res.Moved[0].From != "a" || !res.Moved[0].Removed || res.Moved[0].Pin.Value != m {
		t.Errorf("Moved = %+v, want %s from a, a removed", res.Moved, m)
	}
	pending, _, err := s.Scan(ctx)
	if err != nil || !slices.Equal(names(pending), []string{"b"}) {
		t.Errorf("Scan = %v, %v; want b only (a pinned nothing else)", names(pending), err)
	}
}

func racingPinConflicts(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	const n = 20
	errs := suite.Race(n, func(i int) error {
		_, err := s.Register(ctx, reg(fmt.Sprintf("race%02d", i), "52:54:00:00:00:99"), registry.RegisterOptions{})
		return err
	})
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, registry.ErrPinTaken):
			t.Errorf("race%02d: %v, want nil or ErrPinTaken", i, err)
		}
	}
	pending, _, err := s.Scan(ctx)
	suite.NoError(t, err, "Scan")
	if won != 1 || len(pending) != 1 {
		t.Errorf("%d registers racing for one MAC: %d succeeded and %v are pending, want exactly one", n, won, names(pending))
	}
}

func consumeOnce(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	register(t, s, reg("node1", "52:54:00:00:00:01"))
	errs := suite.Race(Racers, func(i int) error {
		_, err := s.Consume(ctx, "node1", registry.ConsumeRecord{ClientIP: fmt.Sprintf("10.0.%d.%d", i/256, i%256), Undelivered: true})
		return err
	})
	winners := 0
	winner := ""
	for i, err := range errs {
		switch {
		case err == nil:
			winners++
			winner = fmt.Sprintf("10.0.%d.%d", i/256, i%256)
		case !errors.Is(err, registry.ErrAlreadyConsumed) && !errors.Is(err, registry.ErrNotFound):
			t.Errorf("consume %d: %v, want ErrAlreadyConsumed", i, err)
		}
	}
	if winners != 1 {
		t.Fatalf("%d consumes raced: %d won, want exactly one", Racers, winners)
	}
	if _, err := s.Get(ctx, "node1"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("Get of a consumed registration = %v, want ErrNotFound (not pending)", err)
	}
	if _, err := s.Consume(ctx, "node1", registry.ConsumeRecord{}); !errors.Is(err, registry.ErrAlreadyConsumed) {
		t.Errorf("Consume after the race = %v, want ErrAlreadyConsumed", err)
	}
	consumed, err := s.Consumed(ctx)
	if err != nil || len(consumed) != 1 || consumed[0].Consumed == nil {
		t.Fatalf("Consumed = %+v, %v; want node1 with its record", consumed, err)
	}
	if rec := consumed[0].Consumed; rec.ClientIP != winner || !rec.Undelivered || rec.Time.IsZero() {
		t.Errorf("consume record = %+v, want the winner's (%s), undelivered, with a time", rec, winner)
	}
	if _, err := s.Consume(ctx, "never", registry.ConsumeRecord{}); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("Consume of an unknown name = %v, want ErrNotFound", err)
	}
}

func undeliveredAndRearm(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	if err := s.Rearm(ctx, "node1", registry.RearmOptions{}); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("Rearm of an unknown name = %v, want ErrNotFound", err)
	}
	register(t, s, reg("node1", "52:54:00:00:00:01"))
	consume(t, s, "node1", registry.ConsumeRecord{Undelivered: true})
	suite.NoError(t, s.Rearm(ctx, "node1", registry.RearmOptions{WipeData: true}), "Rearm of an undelivered answer, wiping data")
	if r, err := s.Get(ctx, "node1"); err != nil || r.Consumed != nil || !r.WipeData {
		t.Errorf("Get after Rearm wiping data = %+v, %v; want pending with WipeData", r, err)
	}
	consume(t, s, "node1", registry.ConsumeRecord{Undelivered: true})
	suite.NoError(t, s.Rearm(ctx, "node1", registry.RearmOptions{}), "Rearm of an undelivered answer")
	if r, err := s.Get(ctx, "node1"); err != nil || r.Consumed != nil || r.WipeData {
		t.Errorf("Get after Rearm = %+v, %v; want pending, keeping data", r, err)
	}
	consume(t, s, "node1", registry.ConsumeRecord{Undelivered: true})
	suite.NoError(t, s.MarkDelivered(ctx, "node1"), "MarkDelivered")
	consumed, err := s.Consumed(ctx)
	if err != nil || len(consumed) != 1 || consumed[0].Consumed == nil || consumed[0].Consumed.Undelivered {
		t.Errorf("Consumed after MarkDelivered = %+v, %v; want node1 delivered", consumed, err)
	}
	if err := s.Rearm(ctx, "node1", registry.RearmOptions{}); !errors.Is(err, registry.ErrDelivered) {
		t.Errorf("Rearm of a delivered answer = %v, want ErrDelivered", err)
	}
	if _, err := s.Get(ctx, "node1"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("a refused Rearm left node1 pending: Get = %v", err)
	}
	suite.NoError(t, s.Rearm(ctx, "node1", registry.RearmOptions{Force: true}), "forced Rearm")
	if _, err := s.Get(ctx, "node1"); err != nil {
		t.Errorf("Get after a forced Rearm = %v, want pending", err)
	}
	consume(t, s, "node1", registry.ConsumeRecord{Undelivered: true})
	register(t, s, reg("node1", "52:54:00:00:00:01"))
	if err := s.Rearm(ctx, "node1", registry.RearmOptions{Force: true}); !errors.Is(err, registry.ErrInvalidRegistration) {
		t.Errorf("Rearm beside a pending registration of the name = %v, want ErrInvalidRegistration", err)
	}
}

// crashBeforeClaim: a window staged an answer (its files, in another
// store) and died before its claim, or during it: the registration must
// be pending again for the next process, and consumed once.
func crashBeforeClaim(t T, h Harness) {
	if h.Reopen == nil {
		t.Logf("skipped: the harness cannot reopen a store")
		return
	}
	ctx := context.Background()
	s := h.New(t)
	register(t, s, reg("node1", "52:54:00:00:00:01"))
	if h.CrashConsume != nil {
		h.CrashConsume(t, s, "node1", false)
	}
	s = h.Reopen(t, s)
	if r, err := s.Get(ctx, "node1"); err != nil || r.Consumed != nil {
		t.Fatalf("after a crash before the claim: Get = %+v, %v; want node1 pending", r, err)
	}
	if _, err := s.Consume(ctx, "node1", registry.ConsumeRecord{Undelivered: true}); err != nil {
		t.Errorf("Consume after the crash: %v", err)
	}
	if _, err := s.Consume(ctx, "node1", registry.ConsumeRecord{}); !errors.Is(err, registry.ErrAlreadyConsumed) {
		t.Errorf("second Consume after the crash = %v, want ErrAlreadyConsumed", err)
	}
}

// crashAfterClaim: the consumer died once its record was written: the
// answer may be on its way, so the registration stays consumed,
// undelivered, and can be re-armed.
func crashAfterClaim(t T, h Harness) {
	if h.Reopen == nil || h.CrashConsume == nil {
		t.Logf("skipped: the harness cannot crash a consume")
		return
	}
	ctx := context.Background()
	s := h.New(t)
	register(t, s, reg("node1", "52:54:00:00:00:01"))
	h.CrashConsume(t, s, "node1", true)
	s = h.Reopen(t, s)
	if _, err := s.Get(ctx, "node1"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("after a crash past the claim: Get = %v, want ErrNotFound (consumed)", err)
	}
	if _, err := s.Consume(ctx, "node1", registry.ConsumeRecord{}); !errors.Is(err, registry.ErrAlreadyConsumed) {
		t.Errorf("Consume after a crash past the claim = %v, want ErrAlreadyConsumed", err)
	}
	consumed, err := s.Consumed(ctx)
	if err != nil || len(consumed) != 1 || consumed[0].Consumed == nil || !consumed[0].Consumed.Undelivered {
		t.Fatalf("Consumed = %+v, %v; want node1 undelivered", consumed, err)
	}
	if err := s.Rearm(ctx, "node1", registry.RearmOptions{}); err != nil {
		t.Errorf("Rearm after the crash: %v", err)
	}
}

// sshKeys returns keys of about size bytes in all.
func sshKeys(size int) []string {
	var keys []string
	for i := 0; size > 0; i++ {
		k := fmt.Sprintf("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI%s key-%d", strings.Repeat("A", 43), i)
		keys = append(keys, k)
		size -= len(k) + 3
	}
	return keys
}

func sizeBounds(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	big := reg("big", "52:54:00:00:00:01")
	big.SSHKeys = sshKeys(registry.MaxRegistrationSize * 9 / 10)
	register(t, s, big)
	got, err := s.Get(ctx, "big")
	if err != nil || len(got.SSHKeys) != len(big.SSHKeys) {
		t.Errorf("Get of a registration within the bound: %d keys, %v; want %d", len(got.SSHKeys), err, len(big.SSHKeys))
	}
	over := reg("over", "52:54:00:00:00:02")
	over.SSHKeys = sshKeys(registry.MaxRegistrationSize + 1024)
	if _, err := s.Register(ctx, over, registry.RegisterOptions{}); !errors.Is(err, registry.ErrInvalidRegistration) {
		t.Errorf("Register beyond MaxRegistrationSize = %v, want ErrInvalidRegistration", err)
	}
	if _, err := s.Get(ctx, "over"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("a refused registration was kept: Get = %v", err)
	}
	if _, broken, err := s.Scan(ctx); err != nil || len(broken) != 0 {
		t.Errorf("Scan = %v, %v; want nothing broken", broken, err)
	}
}

// staticNetworkKept: a registration's static network (address, gateway,
// DNS, management MAC) is what Get returns, and what the consumed record
// keeps.
func staticNetworkKept(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	r := reg("static1", "52:54:00:aa:00:21", "52:54:00:aa:00:22")
	want := registry.Network{CIDR: "10.20.0.11/24", Gateway: "10.20.0.1", DNS: "10.20.0.53", MAC: "52:54:00:aa:00:22"}
	n := want
	r.Network = &n
	register(t, s, r)
	got, err := s.Get(ctx, "static1")
	if err != nil || got.Network == nil || *got.Network != want {
		t.Fatalf("Get = %+v, %v; want its network %+v", got.Network, err, want)
	}
	consume(t, s, "static1", registry.ConsumeRecord{ClientIP: "192.0.2.21"})
	consumed, err := s.Consumed(ctx)
	suite.NoError(t, err, "Consumed")
	for _, c := range consumed {
		if c.Name == "static1" && (c.Network == nil || *c.Network != want) {
			t.Errorf("the consumed record's network = %+v; want %+v", c.Network, want)
		}
	}
}
