package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/apitoken/tokenstest"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"
)

// TestTokensConformance runs the tokens' suite on a real PostgreSQL, a
// database per check; Other is a second pool on the same database, as
// another host opens it, and Stored is every row of the tokens' table.
func TestTokensConformance(t *testing.T) {
	t.Parallel()
	srv := pgtest.Start(t)
	var mu sync.Mutex
	conns := map[apitoken.Tokens]string{}
	dbs := map[apitoken.Tokens]*postgres.DB{}
	open := func(t tokenstest.T, conn string) apitoken.Tokens {
		db, err := postgres.OpenDB(context.Background(), conn, postgres.DBOptions{})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		if c, ok := t.(interface{ Cleanup(func()) }); ok {
			c.Cleanup(db.Close)
		}
		s := postgres.OpenTokens(db, nil)
		mu.Lock()
		conns[s], dbs[s] = conn, db
		mu.Unlock()
		return s
	}
	of := func(s apitoken.Tokens) (string, *postgres.DB) {
		mu.Lock()
		defer mu.Unlock()
		return conns[s], dbs[s]
	}
	tokenstest.Run(t, tokenstest.Harness{
		New: func(t tokenstest.T) apitoken.Tokens { return open(t, srv.NewDatabase(t.(testing.TB))) },
		Other: func(t tokenstest.T, s apitoken.Tokens) apitoken.Tokens {
			conn, _ := of(s)
			return open(t, conn)
		},
		Stored: func(t tokenstest.T, s apitoken.Tokens) [][]byte {
			_, db := of(s)
			rows, err := db.Pool.Query(context.Background(), "SELECT t::text FROM np_tokens t")
			if err != nil {
				t.Fatalf("stored: %v", err)
			}
			var out [][]byte
			for rows.Next() {
				var row string
				if err := rows.Scan(&row); err != nil {
					t.Fatalf("stored: %v", err)
				}
				out = append(out, []byte(row))
			}
			if err := rows.Err(); err != nil {
				t.Fatalf("stored: %v", err)
			}
			return out
		},
	})
	t.Run("LastUsedSeenByAnotherHost", func(t *testing.T) { lastUsedElsewhere(t, srv) })
}

// lastUsedElsewhere: a token one host accepted is listed as used by
// another at once.
func lastUsedElsewhere(t *testing.T, srv *pgtest.Server) {
	ctx := context.Background()
	conn := srv.NewDatabase(t)
	var hosts []*postgres.Tokens
	for range 2 {
		db, err := postgres.OpenDB(ctx, conn, postgres.DBOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		hosts = append(hosts, postgres.OpenTokens(db, nil))
	}
	tok, err := hosts[0].Create(ctx, "ci", apitoken.ScopeRead, timeZero)
	if err != nil {
		t.Fatal(err)
	}
	if list, err := hosts[1].List(ctx); err != nil || len(list) != 1 || !list[0].LastUsed.IsZero() {
		t.Fatalf("before any use List = %+v, %v; want ci never used", list, err)
	}
	if _, err := hosts[0].Authenticate(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if list, err := hosts[1].List(ctx); err != nil || len(list) != 1 || list[0].LastUsed.IsZero() {
		t.Errorf("after a use on the other host List = %+v, %v; want ci used", list, err)
	}
}

var timeZero time.Time
