package api_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"
)

// revokeRounds is how many times each case revokes a token under an
// open stream.
const revokeRounds = 100

// streamSite is where a stream is open and where its token is revoked
// and the next event written: the same API, or another process or host.
type streamSite struct {
	// streams is the API the stream is opened on.
	streams *env
	// tokens makes the tokens the rounds stream with.
	tokens apitoken.Tokens
	// revoke revokes the token name.
	revoke func(t *testing.T, name string)
	// write appends an event.
	write func(ctx context.Context, evs ...events.Event) error
}

// TestARevokedTokensStreamGetsNoLaterEvent: a read token's stream is
// open (and has had an event); the token is revoked (through this API,
// by another process on the state folder, on another host of a
// PostgreSQL site) and an event is written at once: the stream ends
// without it. Each case runs revokeRounds times.
func TestARevokedTokensStreamGetsNoLaterEvent(t *testing.T) {
	for name, setup := range map[string]func(t *testing.T) streamSite{
		"revoked through the same API":                   sameAPI,
		"revoked by another process on the state folder": otherProcess,
		"revoked on another host of a PostgreSQL site":   otherHost,
	} {
		t.Run(name, func(t *testing.T) {
			site := setup(t)
			start := time.Now()
			for i := range revokeRounds {
				if err := revokeUnderStream(t, site, i); err != nil {
					t.Fatalf("round %d: %v", i, err)
				}
			}
			t.Logf("%d rounds in %s", revokeRounds, time.Since(start).Round(time.Millisecond))
		})
	}
}

// revokeUnderStream runs one round: a new read token's stream, an event
// it gets, the revocation, an event written at once, and the stream's
// end, which must come without that event.
func revokeUnderStream(t *testing.T, site streamSite, round int) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	name := fmt.Sprintf("round-%d", round)
	tok, err := site.tokens.Create(ctx, name, apitoken.ScopeRead, time.Time{})
	if err != nil {
		return err
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", site.streams.ts.URL+"/api/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Last-Event-ID", events.FromNow)
	resp, err := site.streams.ts.Client().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("stream: %s", resp.Status)
	}
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	// The stream follows from the time its log was opened, which may
	// come after the first event written here: write one until it gets
	// there.
	before, after := fmt.Sprintf("before-%d", round), fmt.Sprintf("after-%d", round)
	if err := waitFor(ctx, lines, `"node":"`+before+`"`, func() error {
		return site.write(ctx, events.Event{Kind: events.Answer, Node: before})
	}); err != nil {
		return fmt.Errorf("the events before the revocation: %w", err)
	}
	site.revoke(t, name)
	if err := site.write(ctx, events.Event{Kind: events.Answer, Node: after}); err != nil {
		return err
	}
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return nil
			}
			if strings.Contains(l, after) {
				return fmt.Errorf("the revoked token's stream got the event written after the revocation: %s", l)
			}
		case <-ctx.Done():
			return fmt.Errorf("the revoked token's stream did not end")
		}
	}
}

// waitFor calls write every 10ms until a data line of lines holds want.
func waitFor(ctx context.Context, lines <-chan string, want string, write func() error) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := write(); err != nil {
			return err
		}
		select {
		case l, ok := <-lines:
			for ; ok; l, ok = <-lines {
				if strings.HasPrefix(l, "data: ") && strings.Contains(l, want) {
					return nil
				}
				if len(lines) == 0 {
					break
				}
			}
			if !ok {
				return fmt.Errorf("the stream ended")
			}
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// revokeThrough revokes name through e's API with its admin token.
func revokeThrough(e *env) func(t *testing.T, name string) {
	return func(t *testing.T, name string) {
		t.Helper()
		if r := e.do(t, "DELETE", "/api/v1/tokens/"+name, e.tokens["admin"], ""); r.status != 204 {
			t.Fatalf("revoke %s: %d %s", name, r.status, r.body)
		}
	}
}

func sameAPI(t *testing.T) streamSite {
	var evs *folder.Events
	e := newEnv(t, func(c *api.Config) {
		evs = folder.OpenEvents(folder.EventsPath(stateOf(c)), folder.EventsOptions{Poll: time.Hour})
		c.Events = evs
	})
	t.Cleanup(func() { evs.Close() })
	return streamSite{streams: e, tokens: e.store, revoke: revokeThrough(e), write: evs.Append}
}

func otherProcess(t *testing.T) streamSite {
	e := newEnv(t, nil)
	cli, err := folder.OpenTokens(e.state, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The other process's own event log of the folder, as the CLI's.
	evs := folder.OpenEvents(folder.EventsPath(e.state), folder.EventsOptions{})
	t.Cleanup(func() { evs.Close() })
	return streamSite{streams: e, tokens: e.store, write: evs.Append, revoke: func(t *testing.T, name string) {
		t.Helper()
		if err := cli.Revoke(context.Background(), name); err != nil {
			t.Fatal(err)
		}
	}}
}

// otherHost is two APIs, A and B, on one PostgreSQL (tokens and events),
// each with its own pool: the stream is on B; A revokes and writes.
func otherHost(t *testing.T) streamSite {
	srv := pgtest.Start(t)
	conn := srv.NewDatabase(t)
	host := func() (*postgres.DB, *env) {
		db, err := postgres.OpenDB(context.Background(), conn, postgres.DBOptions{Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		return db, newEnv(t, func(c *api.Config) {
			c.Tokens, c.Events = postgres.OpenTokens(db, nil), postgres.OpenEvents(db, postgres.EventsOptions{})
		})
	}
	dbA, a := host()
	_, b := host()
	admin, err := postgres.OpenTokens(dbA, nil).Create(context.Background(), "admin-a", apitoken.ScopeAdmin, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	a.tokens["admin"] = admin
	return streamSite{streams: b, tokens: postgres.OpenTokens(dbA, nil), revoke: revokeThrough(a),
		write: postgres.OpenEvents(dbA, postgres.EventsOptions{}).Append}
}
