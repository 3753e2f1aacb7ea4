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
