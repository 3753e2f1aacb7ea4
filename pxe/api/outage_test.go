package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/store/postgres"

	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
)

// TestAStoreOutageIs503NamingTheStore: with the registrations in a
// PostgreSQL that stops, listing and registering are 503 naming the
// store without its password; once it is back, the same handler serves
// again, no restart.
func TestAStoreOutageIs503NamingTheStore(t *testing.T) {
	srv := pgtest.Start(t)
	db, err := postgres.OpenDB(context.Background(), srv.NewDatabase(t), postgres.DBOptions{Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	e := newEnv(t, func(c *api.Config) { c.Registry = postgres.OpenRegistrations(db, nil) })
	body := `{"name":"pve1","macs":["52:54:00:00:04:01"],"boot_disk":"sda"}`
	if r := e.do(t, "POST", "/api/v1/registrations", e.tokens["register"], body); r.status != 201 {
		t.Fatalf("register: %d %s", r.status, r.body)
	}
	srv.Stop(t)
	for what, r := range map[string]reply{
		"list":     e.do(t, "GET", "/api/v1/registrations", e.tokens["read"], ""),
		"register": e.do(t, "POST", "/api/v1/registrations", e.tokens["register"], strings.Replace(body, "pve1", "pve2", 1)),
	} {
		if r.status != 503 || !strings.Contains(r.err.Error, "PostgreSQL store") || !strings.Contains(r.err.Error, "127.0.0.1") || strings.Contains(r.body, pgtest.Password) {
			t.Errorf("%s with the store stopped: %d %s; want 503 naming the store without its password", what, r.status, r.body)
		}
	}
	srv.Restart(t)
	var r reply
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if r = e.do(t, "GET", "/api/v1/registrations", e.tokens["read"], ""); r.status == 200 {
			break
		}
	}
	if r.status != 200 || !strings.Contains(r.body, "pve1") {
		t.Errorf("list once the store is back: %d %s; want pve1", r.status, r.body)
	}
}

// TestATokenStoreOutageIs503NamingTheStore: with the tokens in a
// PostgreSQL that stops, every request is 503 saying the tokens cannot
// be read and naming the store without its password; once it is back,
// the same handler and token serve again.
func TestATokenStoreOutageIs503NamingTheStore(t *testing.T) {
	srv := pgtest.Start(t)
	db, err := postgres.OpenDB(context.Background(), srv.NewDatabase(t), postgres.DBOptions{Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	tokens := postgres.OpenTokens(db, nil)
	tok, err := tokens.Create(context.Background(), "reader", apitoken.ScopeRead, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(c *api.Config) { c.Tokens = tokens })
	if r := e.do(t, "GET", "/api/v1/registrations", tok, ""); r.status != 200 {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	srv.Stop(t)
	r := e.do(t, "GET", "/api/v1/registrations", tok, "")
	if r.status != 503 || !strings.Contains(r.err.Error, "cannot read its tokens") || !strings.Contains(r.err.Error, "PostgreSQL store") ||
		!strings.Contains(r.err.Error, "127.0.0.1") || strings.Contains(r.body, pgtest.Password) {
		t.Errorf("with the token store stopped: %d %s; want 503 naming the store without its password", r.status, r.body)
	}
	srv.Restart(t)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if r = e.do(t, "GET", "/api/v1/registrations", tok, ""); r.status == 200 {
			break
		}
	}
	if r.status != 200 {
		t.Errorf("list once the store is back: %d %s", r.status, r.body)
	}
}
