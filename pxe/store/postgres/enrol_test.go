package postgres_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/internal/storetest"
	"github.com/plasmactl/plasma-node/pxe/enrol"
	"github.com/plasmactl/plasma-node/pxe/enrol/enroltest"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"
)

// TestHundredDiscoveriesOnTwoHostsGiveNoNameTwice: 100 machines
// discovered at once, half on each of two hosts of one PostgreSQL
// store, are enrolled by one rule with a limit of 90: 90 registrations,
// of 90 names, and 10 refused at the limit.
func TestHundredDiscoveriesOnTwoHostsGiveNoNameTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := pgtest.Start(t)
	conn := srv.NewDatabase(t)
	var hosts [2]*enrol.Enroller
	var regs [2]*postgres.Registrations
	for i := range hosts {
		db, err := postgres.OpenDB(ctx, conn, postgres.DBOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		r := postgres.OpenRegistrations(db, nil)
		regs[i] = r
		hosts[i] = &enrol.Enroller{Rules: postgres.OpenRules(db), Registrations: r,
			Register: func(ctx context.Context, reg registry.Registration) error {
				_, err := r.Register(ctx, reg, registry.RegisterOptions{})
				return err
			}}
	}
	rule := enroltest.Rule("pve", 1, "pve-{n:03}")
	rule.Limit = 90
	rule.Address = &enrol.Address{Pool: "mgmt", CIDR: "10.0.0.0/24", Gateway: "10.0.0.1", DNS: "10.0.0.1"}
	if err := rule.Check(registry.Site{}); err != nil {
		t.Fatal(err)
	}
	if _, err := hosts[0].Rules.Update(ctx, func(s enrol.State) (enrol.State, error) { return s.Add(rule, false) }); err != nil {
		t.Fatal(err)
	}
	const n = 100
	start := time.Now()
	errs := storetest.Race(n, func(i int) error {
		_, err := hosts[i%2].Enrol(ctx, enroltest.Machine(i))
		return err
	})
	t.Logf("%d enrolments on two hosts in %v", n, time.Since(start).Round(time.Millisecond))
	var limited int
	for i, err := range errs {
		switch {
		case err == nil:
		case errorsIs(err, enrol.ErrLimit):
			limited++
		default:
			t.Errorf("enrolment %d: %v", i, err)
		}
	}
	pending, err := registry.Pending(ctx, regs[1])
	if err != nil {
		t.Fatal(err)
	}
	var names, addrs []string
	for _, r := range pending {
		names, addrs = append(names, r.Name), append(addrs, r.Network.CIDR)
	}
	slices.Sort(addrs)
	if len(pending) != 90 || limited != 10 || len(slices.Compact(addrs)) != 90 {
		t.Errorf("%d registrations (%d addresses), %d refused at the limit; want 90 of 90 addresses and 10", len(pending), len(slices.Compact(addrs)), limited)
	}
	if len(names) > 0 && (names[0] != "pve-001" || names[len(names)-1] != "pve-090") {
		t.Errorf("names run %s to %s, want pve-001 to pve-090", names[0], names[len(names)-1])
	}
	st, err := hosts[1].Rules.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c := st.Counters["pve"]; c.Enrolled != 90 || len(st.Held) != 90 {
		t.Errorf("counter %+v, %d holds; want 90 enrolled and their 90 holds", c, len(st.Held))
	}
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
