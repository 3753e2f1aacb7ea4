package daemon

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSaidKeepsEachStartWarningOnce: the warnings a window logs as it
// starts are kept once each, with their details (attributes given to
// With as well), infos and errors are not, nothing after stop, and at
// most maxSaid; the log still gets every record.
func TestSaidKeepsEachStartWarningOnce(t *testing.T) {
	var logged strings.Builder
	s := &said{}
	log := logSaid(slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelInfo})), s)
	log.Warn("no boot assets staged", "state_dir", "/srv/np")
	log.Warn("no boot assets staged", "state_dir", "/srv/np")
	log.Info("window open")
	log.Error("cannot record a boot step")
	log.With("host", "pxe1").Warn("boot scripts name this server by its host name")
	want := []string{"no boot assets staged (state_dir=/srv/np)", "boot scripts name this server by its host name (host=pxe1)"}
	if diff := cmp.Diff(want, s.list()); diff != "" {
		t.Errorf("said (-want +got):\n%s", diff)
	}
	if n := strings.Count(logged.String(), "\n"); n != 5 {
		t.Errorf("the log got %d records, want all 5:\n%s", n, logged.String())
	}
	for i := range 2 * maxSaid {
		log.Warn(fmt.Sprint("warning ", i))
	}
	if n := len(s.list()); n != maxSaid {
		t.Errorf("%d warnings kept, want the bound %d", n, maxSaid)
	}
	s2 := &said{}
	l2 := logSaid(nil, s2)
	s2.stop()
	l2.Warn("a request refused")
	if got := s2.list(); len(got) != 0 {
		t.Errorf("after stop: %q, want nothing", got)
	}
}
