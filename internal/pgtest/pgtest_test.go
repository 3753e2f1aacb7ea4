package pgtest

import (
	"strings"
	"testing"
)

func TestStartServesSQL(t *testing.T) {
	s := Start(t)
	if got := strings.TrimSpace(s.Exec(t, "select 40 + 2")); got != "42" {
		t.Errorf("select 40 + 2 = %q, want 42", got)
	}
}

// TestStartWithHostListensThere: a cluster started with a Host answers
// on it, and its connection strings name it.
func TestStartWithHostListensThere(t *testing.T) {
	s := StartWith(t, Options{Host: "127.0.0.2"})
	out, err := s.cmd("psql", "-X", "-q", "-A", "-t", "-d", s.NewDatabase(t), "-c", "select inet_server_addr()").CombinedOutput()
	if err != nil {
		t.Fatalf("psql to %s: %v\n%s", s.Host, err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "127.0.0.2" {
		t.Errorf("server address %q, want 127.0.0.2", got)
	}
	if !strings.Contains(s.ConnString(), "@127.0.0.2:") {
		t.Errorf("ConnString %q does not name 127.0.0.2", s.ConnString())
	}
}
