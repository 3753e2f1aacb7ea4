package registrar_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/apitype"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// TestLocalProvisioner: the state folder's window, events and tokens
// through registrar.Local, as the API's client gives them: reads of a
// folder that is not there create nothing, a token made is listed and
// authenticates until revoked, an event appended to the folder's store
// is followed, and an open window shows.
func TestLocalProvisioner(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "state")
	l := &registrar.Local{Dir: dir, SecretsDir: t.TempDir()}
	if w, err := l.Window(ctx); err != nil || w.Open {
		t.Errorf("the window of no folder: %+v, %v", w, err)
	}
	if toks, err := l.Tokens(ctx); err != nil || len(toks) != 0 {
		t.Errorf("the tokens of no folder: %v, %v", toks, err)
	}
	quick, stop := context.WithTimeout(ctx, 50*time.Millisecond)
	if err := l.Events(quick, "", func(string, backend.Event) error { return nil }); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("following the events of no folder: %v", err)
	}
	stop()
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a read created the state folder: %v", err)
	}

	tok, err := l.CreateToken(ctx, "ci", string(apitoken.ScopeRead), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	toks, err := l.Tokens(ctx)
	if err != nil || len(toks) != 1 {
		t.Fatalf("tokens: %v, %v", toks, err)
	}
	want := apitype.TokenInfo{Name: "ci", Scope: "read", Created: toks[0].Created, Expires: toks[0].Expires}
	if diff := cmp.Diff(want, toks[0]); diff != "" || toks[0].Expires.Before(time.Now().Add(59*time.Minute)) {
		t.Errorf("token listed (-want +got):\n%s (expires %v)", diff, toks[0].Expires)
	}
	stores, err := l.Stores(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := stores.Tokens()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tokens.Authenticate(ctx, tok); err != nil {
		t.Errorf("the token made does not authenticate: %v", err)
	}
	if err := l.RevokeToken(ctx, "ci"); err != nil {
		t.Fatal(err)
	}
	if _, err := tokens.Authenticate(ctx, tok); err == nil {
		t.Error("a revoked token authenticates")
	}

	evs, err := l.EventStore(t.Context())
	if err != nil || evs != stores.Events() {
		t.Fatalf("EventStore is not the stores' once open: %v", err)
	}
	if err := evs.Append(ctx, events.Event{Kind: events.Answer, Node: "pve1"}); err != nil {
		t.Fatal(err)
	}
	var got []string
	done := errors.New("done")
	err = l.Events(ctx, "", func(_ string, e backend.Event) error {
		got = append(got, string(e.Kind)+" "+e.Node)
		return done
	})
	if !errors.Is(err, done) || !cmp.Equal(got, []string{string(events.Answer) + " pve1"}) {
		t.Errorf("events followed: %v, %v", got, err)
	}

	now := time.Now()
	if err := window.Write(dir, &window.Record{PID: os.Getpid(), HTTP: "192.0.2.1:8090", Started: now, Deadline: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if w, err := l.Window(ctx); err != nil || !w.Open || w.HTTP != "192.0.2.1:8090" {
		t.Errorf("the open window: %+v, %v", w, err)
	}
}
