package pgtest

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// Running returns how many backends of the cluster are running a
// statement whose text starts with prefix (pg_stat_activity's state
// active), psql's own aside.
func (s *Server) Running(t testing.TB, prefix string) int {
	t.Helper()
	out := s.Exec(t, "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND starts_with(query, '"+
		strings.ReplaceAll(prefix, "'", "''")+"')")
	n, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("pg_stat_activity: %q: %v", out, err)
	}
	return n
}

// WaitRunning waits at most within until [Server.Running] of prefix is
// n, and returns how long that took; it fails the test when it is not.
func (s *Server) WaitRunning(t testing.TB, prefix string, n int, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		got := s.Running(t, prefix)
		if got == n {
			return time.Since(start)
		}
		if time.Since(start) > within {
			t.Fatalf("after %v, %d backends run %q…, want %d", within, got, prefix, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
