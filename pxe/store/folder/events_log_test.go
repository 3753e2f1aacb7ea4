package folder

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/events"
)

func TestEventLogAppendAndRead(t *testing.T) {
	path := EventsPath(t.TempDir())
	l := OpenEvents(path, EventsOptions{})
	at := time.Date(2026, 7, 7, 8, 30, 0, 0, time.UTC)
	evs := []events.Event{
		{Time: at, Kind: events.Answer, Node: "tappaas3", MAC: "aa:bb:cc:dd:ee:03", Serial: "SN-1234", ClientIP: "10.0.0.119", Status: 200, Detail: "mac"},
		{Time: at.Add(time.Second), Kind: events.Refused, MAC: "11:22:33:44:55:66", ClientIP: "10.0.0.120", Status: 404, Detail: "no pending registration matches this machine"},
	}
	for _, e := range evs {
		if err := l.Append(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(t.Context(), evs[0]); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Append after Close = %v, want os.ErrClosed", err)
	}
	got, err := ReadEventsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(evs, got); diff != "" {
		t.Errorf("readEvents (-want +got):\n%s", diff)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"time":"2026-07-07T08:30:00Z","kind":"answer","node":"tappaas3","mac":"aa:bb:cc:dd:ee:03","serial":"SN-1234","client_ip":"10.0.0.119","status":200,"detail":"mac"}` + "\n"
	if first, _, _ := strings.Cut(string(data), "\n"); first+"\n" != want {
		t.Errorf("first line = %s, want %s", first, want)
	}
	assertMode(t, path, 0o600)
}

func TestEventLogFillsInTheTime(t *testing.T) {
	path := EventsPath(t.TempDir())
	l := OpenEvents(path, EventsOptions{})
	defer l.Close()
	if err := l.Append(t.Context(), events.Event{Kind: events.FirstBoot}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadEventsFile(path)
	if err != nil || len(got) != 1 || time.Since(got[0].Time) > time.Minute {
		t.Errorf("readEvents = %+v, %v; want one event of about now", got, err)
	}
}

func TestEventLogConcurrentAppendsKeepWholeLines(t *testing.T) {
	path := EventsPath(t.TempDir())
	// Two logs on one file, as two processes would have.
	l1 := OpenEvents(path, EventsOptions{})
	defer l1.Close()
	l2 := OpenEvents(path, EventsOptions{})
	defer l2.Close()
	const n = 200
	var wg sync.WaitGroup
	detail := strings.Repeat("x", 2000)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := l1
			if i%2 == 1 {
				l = l2
			}
			if err := l.Append(t.Context(), events.Event{Kind: events.Answer, Node: fmt.Sprint("n", i), Detail: detail}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, err := ReadEventsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("read %d events, want %d", len(got), n)
	}
	var nodes []string
	for _, e := range got {
		nodes = append(nodes, e.Node)
	}
	sort.Strings(nodes)
	for i := 1; i < len(nodes); i++ {
		if nodes[i] == nodes[i-1] {
			t.Fatalf("event %s twice", nodes[i])
		}
	}
}

func TestReadEventsToleratesTornLines(t *testing.T) {
	good := `{"time":"2026-07-07T08:30:00Z","kind":"answer","node":"a"}`
	tests := map[string]struct {
		content string
		want    []string
	}{
		"a torn last line is skipped":    {content: good + "\n" + `{"time":"2026-07-07T08:3`, want: []string{"a"}},
		"a torn earlier line is skipped": {content: `{"kind":"ans` + "\n" + good + "\n", want: []string{"a"}},
		"blank lines are skipped":        {content: "\n" + good + "\n\n", want: []string{"a"}},
		"an empty file has no events":    {content: ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			path := writeFile(t, EventsPath(t.TempDir()), tc.content)
			got, err := ReadEventsFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var nodes []string
			for _, e := range got {
				nodes = append(nodes, e.Node)
			}
			if diff := cmp.Diff(tc.want, nodes); diff != "" {
				t.Errorf("nodes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOpenClosesOffATornLine(t *testing.T) {
	path := writeFile(t, EventsPath(t.TempDir()), `{"time":"2026-07-07T08:30:00Z","kind":"answer","node":"a"}`+"\n"+`{"kind":"ans`)
	l := OpenEvents(path, EventsOptions{})
	if err := l.Append(t.Context(), events.Event{Kind: events.Answer, Node: "b"}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	got, err := ReadEventsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Node != "a" || got[1].Node != "b" {
		t.Errorf("readEvents = %+v, want a and b", got)
	}
}

func TestReadEventsOfAMissingFile(t *testing.T) {
	got, err := ReadEventsFile(filepath.Join(t.TempDir(), "none.jsonl"))
	if err != nil || got != nil {
		t.Errorf("readEvents = %v, %v; want nothing", got, err)
	}
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// readEvents returns the events of the log at path, the rotated part
// (<path>.1) first: all an [Events] keeps.
func readEvents(path string) ([]events.Event, error) {
	old, err := ReadEventsFile(path + ".1")
	if err != nil {
		return nil, err
	}
	cur, err := ReadEventsFile(path)
	return append(old, cur...), err
}
