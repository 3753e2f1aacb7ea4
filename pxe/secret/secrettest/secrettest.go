package secrettest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/plasmactl/plasma-node/internal/storetest"
	"github.com/plasmactl/plasma-node/pxe/secret"
)

// T is what a check needs of a test ([storetest.T]).
type T = storetest.T

// Kept is one secret as a store keeps it at rest.
type Kept struct {
	// Where names it (for files, the path).
	Where string
	// Mode is who may read it: for a file its mode, with the group and
	// others bits of its folder's mode added; a store that is not files
	// reports 0o600 for a secret only its owner may read.
	Mode fs.FileMode
	// Data is what is kept.
	Data []byte
}

// Harness gives a suite stores of the implementation under test: S is
// the contract the suite checks ([secret.Store] or [secret.Site]).
type Harness[S any] struct {
	// New returns a new, empty store for one check. Required.
	New func(t T) S
	// Kept returns everything s keeps at rest, temporary copies
	// included. Nil skips the checks of what is kept (privacy, removal,
	// staging).
	Kept func(t T, s S) []Kept
}

// NodeHarness is the harness of the nodes' secrets' suite ([Run]).
type NodeHarness = Harness[secret.Store]

// Check is one conformance check.
type Check = storetest.Check[NodeHarness]

// Checks returns the suite's checks.
func Checks() []Check {
	return []Check{
		{Name: "BMCRoundTrip", Run: bmcRoundTrip},
		{Name: "BMCRefusals", Run: bmcRefusals},
		{Name: "RootStaged", Run: rootStaged},
		{Name: "KeptPrivately", Run: keptPrivately},
		{Name: "RemovedLeavesNothing", Run: removedLeavesNothing},
		{Name: "ConcurrentWriters", Run: concurrentWriters},
	}
}

// Run runs every check as a subtest of t.
func Run(t *testing.T, h NodeHarness) { storetest.Run(t, h, Checks()) }

// quoted reports an error that holds pw.
func quoted(t T, what string, err error, pw string) {
	t.Helper()
	if err != nil && pw != "" && strings.Contains(err.Error(), pw) {
		t.Errorf("%s: the error quotes the password: %v", what, err)
	}
}

func writeBMC(t T, s secret.Store, node, pw string) {
	t.Helper()
	_, err := s.WriteBMCPassword(context.Background(), node, pw)
	storetest.NoError(t, err, "WriteBMCPassword "+node)
}

func bmcRoundTrip(t T, h NodeHarness) {
	ctx := context.Background()
	s := h.New(t)
	if pw, err := s.ReadBMCPassword(ctx, "node1"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadBMCPassword of a node with none = %q, %v; want an error wrapping fs.ErrNotExist", pw, err)
	}
	where, err := s.WriteBMCPassword(ctx, "node1", "first-Pa55")
	storetest.NoError(t, err, "WriteBMCPassword")
	if strings.Contains(where, "first-Pa55") {
		t.Errorf("WriteBMCPassword says where as %q, which quotes the password", where)
	}
	writeBMC(t, s, "node2", "other-Pa55")
	if pw, err := s.ReadBMCPassword(ctx, "node1"); err != nil || pw != "first-Pa55" {
		t.Errorf("ReadBMCPassword = %q, %v; want the one written", pw, err)
	}
	writeBMC(t, s, "node1", "second-Pa55")
	if pw, err := s.ReadBMCPassword(ctx, "node1"); err != nil || pw != "second-Pa55" {
		t.Errorf("ReadBMCPassword after a second write = %q, %v; want the second", pw, err)
	}
	storetest.NoError(t, s.RemoveBMCPassword(ctx, "node1"), "RemoveBMCPassword")
	if pw, err := s.ReadBMCPassword(ctx, "node1"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadBMCPassword after its removal = %q, %v; want an error wrapping fs.ErrNotExist", pw, err)
	}
	if err := s.RemoveBMCPassword(ctx, "node1"); err != nil {
		t.Errorf("RemoveBMCPassword of none = %v, want nil", err)
	}
	if pw, err := s.ReadBMCPassword(ctx, "node2"); err != nil || pw != "other-Pa55" {
		t.Errorf("ReadBMCPassword of node2 after node1's removal = %q, %v; want its own", pw, err)
	}
}

func bmcRefusals(t T, h NodeHarness) {
	ctx := context.Background()
	s := h.New(t)
	for _, pw := range []string{"", "two\nlines-Pa55", "cr\rline-Pa55"} {
		_, err := s.WriteBMCPassword(ctx, "node1", pw)
		if !errors.Is(err, secret.ErrInvalidPassword) {
			t.Errorf("WriteBMCPassword(%q) = %v, want ErrInvalidPassword", pw, err)
		}
		quoted(t, "WriteBMCPassword", err, pw)
	}
	if pw, err := s.ReadBMCPassword(ctx, "node1"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after refused writes ReadBMCPassword = %q, %v; want none kept", pw, err)
	}
	for _, name := range []string{"", "../escape", "a/b", "node 1", strings.Repeat("n", 64)} {
		_, err := s.WriteBMCPassword(ctx, name, "bad-name-Pa55")
		if err == nil {
			t.Errorf("WriteBMCPassword of name %q: no error", name)
		}
		quoted(t, "WriteBMCPassword of a bad name", err, "bad-name-Pa55")
		st, err := s.StageRootPassword(ctx, name, "bad-name-Pa55")
		if err == nil {
			st.Discard()
			t.Errorf("StageRootPassword of name %q: no error", name)
		}
		quoted(t, "StageRootPassword of a bad name", err, "bad-name-Pa55")
	}
	for _, pw := range []string{"", "two\nlines-Pa55"} {
		st, err := s.StageRootPassword(ctx, "node1", pw)
		if err == nil {
			st.Discard()
			t.Errorf("StageRootPassword(%q): no error", pw)
		}
		quoted(t, "StageRootPassword", err, pw)
	}
	if h.Kept != nil {
		for _, k := range h.Kept(t, s) {
			if strings.Contains(string(k.Data), "bad-name-Pa55") || strings.Contains(string(k.Data), "lines-Pa55") {
				t.Errorf("a refused password is kept in %s", k.Where)
			}
		}
	}
}

// holding returns where pw is kept.
func holding(t T, h NodeHarness, s secret.Store, pw string) []string {
	var out []string
	for _, k := range h.Kept(t, s) {
		if strings.Contains(string(k.Data), pw) {
			out = append(out, k.Where)
		}
	}
	return out
}

func rootStaged(t T, h NodeHarness) {
	ctx := context.Background()
	if h.Kept == nil {
		t.Logf("no Kept: what a staged root password leaves is not checked")
		return
	}
	s := h.New(t)
	st, err := s.StageRootPassword(ctx, "node1", "discarded-Pa55")
	storetest.NoError(t, err, "StageRootPassword")
	st.Discard()
	if w := holding(t, h, s, "discarded-Pa55"); len(w) > 0 {
		t.Errorf("a discarded root password is kept in %v", w)
	}
	st, err = s.StageRootPassword(ctx, "node1", "first-root-Pa55")
	storetest.NoError(t, err, "StageRootPassword")
	storetest.NoError(t, st.Commit(ctx), "Commit")
	if w := holding(t, h, s, "first-root-Pa55"); len(w) != 1 {
		t.Errorf("a committed root password is kept in %v, want one place", w)
	}
	writeBMC(t, s, "node1", "bmc-Pa55")
	st, err = s.StageRootPassword(ctx, "node1", "second-root-Pa55")
	storetest.NoError(t, err, "StageRootPassword again")
	storetest.NoError(t, st.Commit(ctx), "Commit again")
	if w := holding(t, h, s, "first-root-Pa55"); len(w) > 0 {
		t.Errorf("the replaced root password is still kept in %v", w)
	}
	if w := holding(t, h, s, "second-root-Pa55"); len(w) != 1 {
		t.Errorf("the second root password is kept in %v, want one place", w)
	}
	if pw, err := s.ReadBMCPassword(ctx, "node1"); err != nil || pw != "bmc-Pa55" {
		t.Errorf("ReadBMCPassword beside a root password = %q, %v; want the BMC password", pw, err)
	}
}

func keptPrivately(t T, h NodeHarness) {
	ctx := context.Background()
	if h.Kept == nil {
		t.Logf("no Kept: privacy not checked")
		return
	}
	s := h.New(t)
	writeBMC(t, s, "node1", "bmc-Pa55")
	st, err := s.StageRootPassword(ctx, "node1", "root-Pa55")
	storetest.NoError(t, err, "StageRootPassword")
	staged := h.Kept(t, s)
	storetest.NoError(t, st.Commit(ctx), "Commit")
	kept := append(staged, h.Kept(t, s)...)
	if len(kept) == 0 {
		t.Fatalf("Kept reports nothing after two secrets were kept")
	}
	for _, k := range kept {
		if k.Mode.Perm()&0o077 != 0 {
			t.Errorf("%s is kept with mode %v: group or others may read it; want 0600", k.Where, k.Mode.Perm())
		}
	}
}

func removedLeavesNothing(t T, h NodeHarness) {
	ctx := context.Background()
	if h.Kept == nil {
		t.Logf("no Kept: what a removal leaves is not checked")
		return
	}
	s := h.New(t)
	writeBMC(t, s, "node1", "removed-Pa55")
	writeBMC(t, s, "node2", "kept-Pa55")
	storetest.NoError(t, s.RemoveBMCPassword(ctx, "node1"), "RemoveBMCPassword")
	if w := holding(t, h, s, "removed-Pa55"); len(w) > 0 {
		t.Errorf("a removed BMC password is still kept in %v", w)
	}
	if w := holding(t, h, s, "kept-Pa55"); len(w) != 1 {
		t.Errorf("node2's BMC password is kept in %v, want one place", w)
	}
}

func concurrentWriters(t T, h NodeHarness) {
	s := h.New(t)
	raceWriters(t, "node", func(ctx context.Context, name, pw string) error {
		_, err := s.WriteBMCPassword(ctx, name, pw)
		return err
	}, s.ReadBMCPassword)
}

// raceWriters writes, from 20 goroutines at once, 20 values of one name
// and one value of each of 20 names (prefix and a number), reading the
// shared one among them: each read must be one whole value written, and
// each name must end with its own.
func raceWriters(t T, prefix string, write func(ctx context.Context, name, value string) error, read func(ctx context.Context, name string) (string, error)) {
	ctx := context.Background()
	const n = 20
	written := make([]string, n)
	for i := range n {
		written[i] = fmt.Sprintf("racer-%02d-%s", i, strings.Repeat("x", 200+i*37))
	}
	storetest.NoError(t, write(ctx, "shared", written[0]), "write shared")
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := write(ctx, "shared", written[i]); err != nil {
				t.Errorf("write %d: %v", i, err)
			}
		})
		wg.Go(func() {
			if err := write(ctx, fmt.Sprintf("%s%02d", prefix, i), written[i]); err != nil {
				t.Errorf("write %s%02d: %v", prefix, i, err)
			}
		})
		wg.Go(func() {
			if v, err := read(ctx, "shared"); err != nil || !slices.Contains(written, v) {
				t.Errorf("a read among writers = %.20q (%d bytes), %v; want one whole value written", v, len(v), err)
			}
		})
	}
	wg.Wait()
	if v, err := read(ctx, "shared"); err != nil || !slices.Contains(written, v) {
		t.Errorf("after the writers the shared one = %.20q, %v; want one of theirs", v, err)
	}
	for i := range n {
		if v, err := read(ctx, fmt.Sprintf("%s%02d", prefix, i)); err != nil || v != written[i] {
			t.Errorf("%s%02d = %.20q, %v; want its own", prefix, i, v, err)
		}
	}
}
