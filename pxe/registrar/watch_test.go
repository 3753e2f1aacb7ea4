package registrar_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/apitype"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registrar"
)

// fakeProvisioner lists one node and streams fixed events, then fails
// with err or waits for the end.
type fakeProvisioner struct {
	registrar.Provisioner
	events []backend.Event
	err    error
}

func (f fakeProvisioner) Nodes(context.Context) ([]backend.Node, error) {
	return []backend.Node{{Name: "pve4", MACs: []string{"52:54:00:00:00:44"}}}, nil
}

func (f fakeProvisioner) Events(ctx context.Context, _ string, fn func(string, backend.Event) error) error {
	time.Sleep(400 * time.Millisecond) // after WatchInstall returned
	for _, e := range f.events {
		if err := fn("", e); err != nil {
			return err
		}
	}
	if f.err != nil {
		return f.err
	}
	<-ctx.Done()
	return ctx.Err()
}

func TestWatchInstall(t *testing.T) {
	steps := []backend.Event{{Kind: events.DHCPOffer, MAC: "52:54:00:00:00:99"}, {Kind: events.DHCPOffer, MAC: "52:54:00:00:00:44"},
		{Kind: events.Answer, Node: "pve4", Status: 403}, {Kind: events.Answer, Node: "pve4", Status: 200}, {Kind: events.Installed, Node: "pve4"}}
	broken := errors.New("stream broke")
	for name, tc := range map[string]struct {
		p         fakeProvisioner
		wantSteps []string
		wantSeen  int
		wantErr   error
	}{
		"its steps by MAC and name until installed; others' and refused answers are not its": {p: fakeProvisioner{events: steps},
			wantSteps: []string{"started", string(events.DHCPOffer), string(events.Answer), string(events.Installed)}, wantSeen: 3},
		"no install within the timeout": {p: fakeProvisioner{events: steps[:2]}, wantSteps: []string{"started", string(events.DHCPOffer)}, wantSeen: 1, wantErr: context.DeadlineExceeded},
		"a stream that fails":           {p: fakeProvisioner{err: broken}, wantSteps: []string{"started"}, wantErr: registrar.ErrEventStream},
	} {
		t.Run(name, func(t *testing.T) {
			w, err := registrar.WatchInstall(context.Background(), tc.p, "pve4")
			if err != nil {
				t.Fatal(err)
			}
			seen := 0
			res, err := w.Wait(context.Background(), time.Second, func(e backend.Event) {
				if e.Time.IsZero() {
					t.Errorf("a step without its time: %+v", e)
				}
				seen++
			})
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("err %v, want %v", err, tc.wantErr)
			}
			if d := cmp.Diff(tc.wantSteps, res.Steps); d != "" || seen != tc.wantSeen {
				t.Errorf("steps (-want +got):\n%s; %d seen, want %d", d, seen, tc.wantSeen)
			}
		})
	}
}

// closingProvisioner is a fakeProvisioner whose window is open until
// closes.
type closingProvisioner struct {
	fakeProvisioner
	closes time.Time
}

func (c closingProvisioner) Window(context.Context) (apitype.WindowStatus, error) {
	return apitype.WindowStatus{Open: time.Now().Before(c.closes)}, nil
}

// TestFollow: Follow passes the events until the window closes, or until
// its context ends when it does not wait for the close; a failed stream
// is its error.
func TestFollow(t *testing.T) {
	e := backend.Event{Kind: events.DHCPOffer, MAC: "52:54:00:00:00:44"}
	p := closingProvisioner{fakeProvisioner{events: []backend.Event{e}}, time.Now().Add(500 * time.Millisecond)}
	var got []backend.Event
	closed, err := registrar.Follow(context.Background(), p, true, func(e backend.Event) error { got = append(got, e); return nil })
	if !closed || err != nil || len(got) != 1 {
		t.Errorf("until closed: closed %v, err %v, events %v; want closed, nil, the one event", closed, err, got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer time.AfterFunc(700*time.Millisecond, cancel).Stop()
	if closed, err := registrar.Follow(ctx, p, false, func(backend.Event) error { return nil }); closed || err != nil {
		t.Errorf("until interrupted: closed %v, err %v; want neither", closed, err)
	}
	failing := closingProvisioner{fakeProvisioner{err: errors.New("stream broke")}, time.Now().Add(time.Hour)}
	if _, err := registrar.Follow(context.Background(), failing, true, func(backend.Event) error { return nil }); err == nil {
		t.Error("a failed stream: nil error")
	}
}
