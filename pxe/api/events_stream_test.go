package api_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// TestEventsReachTheStreamInProcess: the stream follows the process's
// one event store (the daemon's), so an event appended to it is on the
// stream at once, with the log's polling set to an hour; nothing opens a
// second log.
func TestEventsReachTheStreamInProcess(t *testing.T) {
	var store *folder.Events
	e := newEnv(t, func(c *api.Config) {
		store = folder.OpenEvents(folder.EventsPath(stateOf(c)), folder.EventsOptions{Poll: time.Hour})
		c.Events = store
	})
	defer store.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.ts.URL+"/api/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+e.tokens["read"])
	req.Header.Set("Last-Event-ID", events.FromNow)
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	if first := <-lines; !strings.HasPrefix(first, ":") {
		t.Fatalf("stream opened with %q", first)
	}
	time.Sleep(100 * time.Millisecond) // the stream follows
	start := time.Now()
	if err := store.Append(ctx, events.Event{Kind: events.Answer, Node: "pve1", Status: 200}); err != nil {
		t.Fatal(err)
	}
	for l := range lines {
		if strings.HasPrefix(l, "data: ") {
			if !strings.Contains(l, `"node":"pve1"`) {
				t.Errorf("event %s, want pve1's answer", l)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("the event took %v to reach the stream", took)
			}
			return
		}
	}
	t.Fatal("the stream ended without the event")
}
