package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/plasmactl/plasma-node/internal/cli"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store"
)

// TestReinstallWipeDataConfirm: wiping data takes the typed word yes (a
// bare y declines, exit 1); a plain reinstall still takes y; without a
// terminal it is a usage error naming --force.
func TestReinstallWipeDataConfirm(t *testing.T) {
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	tests := map[string]struct {
		in        func() any
		wipe      bool
		wantErr   string
		wantUsage bool
	}{
		"yes wipes data":                       {in: func() any { return strings.NewReader("yes\n") }, wipe: true},
		"a bare y does not wipe data":          {in: func() any { return strings.NewReader("y\n") }, wipe: true, wantErr: "reinstall pve3 declined; nothing was re-armed"},
		"a bare y reinstalls keeping data":     {in: func() any { return strings.NewReader("y\n") }},
		"no declines":                          {in: func() any { return strings.NewReader("no\n") }, wantErr: "declined"},
		"no terminal is a usage error to wipe": {in: func() any { return devNull }, wipe: true, wantErr: "give --force", wantUsage: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cmd := &cobra.Command{}
			cmd.SetContext(context.Background())
			switch in := tc.in().(type) {
			case *strings.Reader:
				cmd.SetIn(in)
			case *os.File:
				cmd.SetIn(in)
			}
			var prompt strings.Builder
			cmd.SetErr(&prompt)
			err := confirm(cmd, "pve3", tc.wipe)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("confirm = %v, want nil", err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("confirm = %v, want an error with %q", err, tc.wantErr)
			}
			if err != nil && cli.IsUsage(err) != tc.wantUsage {
				t.Errorf("confirm = %v: usage error %t, want %t", err, !tc.wantUsage, tc.wantUsage)
			}
			if tc.wipe && !tc.wantUsage && !strings.Contains(prompt.String(), `WIPE its data pools`) {
				t.Errorf("the prompt does not say the data pools are wiped: %q", prompt.String())
			}
		})
	}
}

// TestReinstallWipeData: reinstall --wipe-data re-arms the node to
// create its data pools anew and says so; the next plain reinstall keeps
// them again.
func TestReinstallWipeData(t *testing.T) {
	dir := t.TempDir()
	if r := np(t, dir, "register", "pve3", "--mac", "52:54:00:00:00:33", "--boot-disk", "25414A800205", "--pool", "tank=mirror:S4EWNX0N123456,WD-WCC4E1234567"); r.code != 0 {
		t.Fatalf("register: %d %s", r.code, r.err)
	}
	stores, err := store.Open(t.Context(), dir, store.Options{SecretsDir: filepath.Join(dir, "secrets")})
	if err != nil {
		t.Fatal(err)
	}
	regs := stores.Registrations()
	for _, step := range []struct {
		args []string
		out  string
		wipe bool
	}{
		{[]string{"reinstall", "pve3", "--wipe-data", "--force"}, "pve3: re-armed for one install with a new root password, its data pools to be created anew; netboot its machine\n", true},
		{[]string{"reinstall", "pve3", "--force"}, "pve3: re-armed for one install with a new root password; netboot its machine\n", false},
	} {
		if _, err := regs.Consume(context.Background(), "pve3", registry.ConsumeRecord{Time: time.Now(), ClientIP: "192.0.2.33"}); err != nil {
			t.Fatal(err)
		}
		r := np(t, dir, step.args...)
		if r.code != 0 || r.stdout != step.out {
			t.Errorf("%v: %d %q %s; want 0 and %q", step.args, r.code, r.stdout, r.err, step.out)
		}
		if p, err := regs.Get(context.Background(), "pve3"); err != nil || p.WipeData != step.wipe {
			t.Errorf("%v: pending = %+v, %v; want WipeData %t", step.args, p, err, step.wipe)
		}
	}
}
