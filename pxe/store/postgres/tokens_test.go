package postgres_test

import (
	"context"
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
	pg := newHandles[apitoken.Tokens](srv)
	tokenstest.Run(t, tokenstest.Harness{
		New: func(t tokenstest.T) apitoken.Tokens {
			return pg.open(t, "", func(db *postgres.DB) apitoken.Tokens { return postgres.OpenTokens(db, nil) })
		},
		Other: pg.again,
		Stored: func(t tokenstest.T, s apitoken.Tokens) [][]byte {
			rows, err := pg.of(s).db.Pool.Query(context.Background(), "SELECT t::text FROM np_tokens t")
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
