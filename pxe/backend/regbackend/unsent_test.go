package regbackend_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// TestStartReArmsAnswersThatNeverLeft: a window killed between a
// registration's consumption and placing its answer's files (the
// password first) left it consumed and undelivered with no password,
// and no installer got that answer. The next window on the folders puts
// it back to pending; one whose password is there (the answer may have
// been cut on its way) stays undelivered for an operator's rearm, a
// delivered one stays delivered, and with stores that are not the state
// folder's (shared by two hosts, where another host may be between those
// steps, and which have no Recover) nothing is re-armed.
func TestStartReArmsAnswersThatNeverLeft(t *testing.T) {
	for _, tc := range []struct {
		name    string
		folders bool
		want    map[string]string
	}{
		{"folders", true, map[string]string{"unsent": "pending", "cut": "undelivered", "done": "delivered", "waiting": "pending"}},
		{"shared secrets", false, map[string]string{"unsent": "undelivered", "cut": "undelivered", "done": "delivered", "waiting": "pending"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			state := t.TempDir()
			store, err := folder.OpenRegistrations(state, nil)
			if err != nil {
				t.Fatal(err)
			}
			sec, err := folder.OpenSecrets(filepath.Join(t.TempDir(), "secrets"))
			if err != nil {
				t.Fatal(err)
			}
			for i, name := range []string{"unsent", "cut", "done", "waiting"} {
				if _, err := store.Put(ctx, mustReg(t, name, []string{"52:54:00:00:00:0" + string(rune('1'+i))}, "sda")); err != nil {
					t.Fatal(err)
				}
			}
			for _, name := range []string{"unsent", "cut", "done"} {
				if _, err := store.Consume(ctx, name, registry.ConsumeRecord{Undelivered: true}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := sec.WritePassword("cut", "a password"); err != nil {
				t.Fatal(err)
			}
			if err := store.MarkDelivered(ctx, "done"); err != nil {
				t.Fatal(err)
			}
			var recover func(context.Context) error
			if tc.folders {
				recover = func(ctx context.Context) error { return folder.Recover(ctx, store, sec, nil) }
			}
			b, err := regbackend.New(regbackend.Config{Store: store, Secrets: sec, StateDir: state,
				Events: folder.OpenEvents(folder.EventsPath(state), folder.EventsOptions{}), Recover: recover})
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Start(ctx); err != nil { // as a window opening on it
				t.Fatal(err)
			}
			got := map[string]string{}
			pending, _, err := store.Scan(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range pending {
				got[r.Name] = "pending"
			}
			consumed, err := store.Consumed(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range consumed {
				if _, ok := got[r.Name]; ok {
					t.Errorf("%s is pending and consumed at once", r.Name)
				}
				got[r.Name] = "delivered"
				if r.Consumed.Undelivered {
					got[r.Name] = "undelivered"
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("states after a window starts (-want +got):\n%s", diff)
			}
		})
	}
}
